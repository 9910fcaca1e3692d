"""Edit the elements of a URDF's kinematic tree in place: an XML parser (expat) finds where each `<link>` and
`<joint>` of the `<robot>` element and their children are in the text, and only those bytes change. Comments,
`<ros2_control>`, `<transmission>`, `<gazebo>` and everything else stay byte for byte, whatever they name."""

from __future__ import annotations

import re
import xml.parsers.expat
from collections.abc import Mapping
from dataclasses import dataclass, field


class UrdfEditError(ValueError):
    """The URDF cannot be edited as asked, with the reason."""


@dataclass
class Element:
    """An element's place in the UTF-8 text: [start, end) in bytes, its opening tag ending at `open_end`."""

    tag: str
    attributes: dict[str, str]
    start: int
    open_end: int = 0
    end: int = 0
    children: list[Element] = field(default_factory=list)

    @property
    def self_closing(self) -> bool:
        return self.open_end == self.end

    def child(self, tag: str) -> Element | None:
        """The first direct child `tag`, or None."""
        return next((c for c in self.children if c.tag == tag), None)


def _tag_end(data: bytes, start: int) -> int:
    """The byte after the '>' that closes the tag starting at `start` (quoted '>' skipped)."""
    quote = None
    for i in range(start, len(data)):
        c = data[i]
        if quote is not None:
            quote = None if c == quote else quote
        elif c in b"\"'":
            quote = c
        elif c == ord(">"):
            return i + 1
    raise UrdfEditError("an unterminated tag")


def tree_elements(text: str) -> dict[tuple[str, str], Element]:
    """The `<link>` and `<joint>` elements directly in `<robot>`, keyed by (tag, name), with their children."""
    data = text.encode()
    parser = xml.parsers.expat.ParserCreate()
    stack: list[Element] = []
    found: dict[tuple[str, str], Element] = {}

    def start(tag: str, attributes: dict[str, str]) -> None:
        element = Element(tag, attributes, parser.CurrentByteIndex)
        element.open_end = _tag_end(data, element.start)
        if data[element.open_end - 2:element.open_end] == b"/>":
            element.end = element.open_end
        if len(stack) >= 2:
            stack[-1].children.append(element)
        if len(stack) == 1 and tag in ("link", "joint"):
            key = (tag, attributes.get("name", ""))
            if key in found:
                raise UrdfEditError(f"two <{tag}> elements named '{key[1]}'")
            found[key] = element
        stack.append(element)

    def end(tag: str) -> None:
        element = stack.pop()
        if not element.self_closing:  # expat is at its end tag
            element.end = _tag_end(data, parser.CurrentByteIndex)

    parser.StartElementHandler, parser.EndElementHandler = start, end
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as err:
        raise UrdfEditError(f"the URDF is not well-formed XML: {err}") from None
    return found


def _indent(data: bytes, at: int) -> bytes:
    """The whitespace that starts the line of byte `at`."""
    line = data[data.rfind(b"\n", 0, at) + 1:at]
    return re.match(rb"[ \t]*", line).group(0)


class UrdfEditor:
    """Collects replacements of a URDF's tree elements, then applies them from the end of the text backwards."""

    def __init__(self, text: str) -> None:
        self.data = text.encode()
        self.elements = tree_elements(text)
        self.edits: list[tuple[int, int, bytes]] = []

    def element(self, tag: str, name: str) -> Element:
        element = self.elements.get((tag, name))
        if element is None:
            raise UrdfEditError(f"the URDF's <robot> has no <{tag}> named '{name}'")
        return element

    def set_child(self, tag: str, name: str, child_xml: str) -> None:
        """Replace the element's first child of the same tag as `child_xml` (an element written at the child's
        indent), or insert it as its first child."""
        parent = self.element(tag, name)
        child_tag = re.match(r"<(\w+)", child_xml).group(1)
        inner = _indent(self.data, parent.start) + b"  "
        new = child_xml.replace("\n", "\n" + inner.decode()).encode()
        old = parent.child(child_tag)
        if old is not None:
            self.edits.append((old.start, old.end, new))
        elif parent.self_closing:
            head = self.data[parent.start:parent.open_end - 2].rstrip()  # without its "/>"
            closing = b"\n" + _indent(self.data, parent.start) + f"</{tag}>".encode()
            self.edits.append((parent.start, parent.end, head + b">\n" + inner + new + closing))
        else:
            self.edits.append((parent.open_end, parent.open_end, b"\n" + inner + new))

    def set_attributes(self, tag: str, name: str, child_tag: str, values: Mapping[str, str]) -> None:
        """Set attributes of the element's child `child_tag`, keeping its other attributes in their order; the child
        is created when missing."""
        old = self.element(tag, name).child(child_tag)
        if old is None:
            self.set_child(tag, name, f"<{child_tag} " + " ".join(f'{k}="{v}"' for k, v in values.items()) + "/>")
            return
        merged = {**old.attributes, **values}
        attributes = " ".join(f'{k}="{_escaped(v)}"' for k, v in merged.items())
        body = self.data[old.open_end:old.end] if not old.self_closing else b""
        opening = f"<{child_tag} {attributes}" + ("/>" if old.self_closing else ">")
        self.edits.append((old.start, old.end, opening.encode() + body))

    def text(self) -> str:
        data = self.data
        for start, end, new in sorted(self.edits, key=lambda e: e[0], reverse=True):
            data = data[:start] + new + data[end:]
        return data.decode()


def _escaped(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
