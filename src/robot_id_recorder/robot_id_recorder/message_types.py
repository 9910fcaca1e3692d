"""Message definitions for recording any topic as raw CDR bytes: rosbags' ROS 2 types, plus any interface package
installed in the ament index (robot_id_msgs, lbr_fri_idl, franka_msgs, ...), registered from its .msg text with
every type it references, so the bag stores complete definitions and decodes where those packages are missing."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterable

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

MsgFinder = Callable[[str, str], pathlib.Path | None]
"""(package, message name) -> the installed .msg file, or None."""


def installed_msg(package: str, name: str) -> pathlib.Path | None:
    """<share of package>/msg/<name>.msg from the ament index; None when the package is not installed."""
    try:
        from ament_index_python.packages import get_package_share_directory

        path = pathlib.Path(get_package_share_directory(package)) / "msg" / f"{name}.msg"
    except (ImportError, LookupError, OSError):
        return None
    return path if path.is_file() else None


def _referenced(field: tuple) -> Iterable[str]:
    """Type names a field definition refers to (nested, in sequences and arrays)."""
    kind, detail = field
    if kind.name == "NAME":
        yield detail
    elif kind.name in ("SEQUENCE", "ARRAY"):
        yield from _referenced(detail[0])


def typestore_for(msgtypes: Iterable[str], find: MsgFinder = installed_msg) -> Typestore:
    """A typestore that knows every type of `msgtypes` and all they reference; raises KeyError naming a type that
    neither rosbags nor an installed package defines."""
    store = get_typestore(Stores.ROS2_KILTED)
    pending = [t for t in msgtypes if t not in store.fielddefs]
    while pending:
        msgtype = pending.pop()
        if msgtype in store.fielddefs:
            continue
        package, _, name = msgtype.split("/")
        path = find(package, name)
        if path is None:
            raise KeyError(f"no definition of {msgtype}: is {package} installed and sourced?")
        types = get_types_from_msg(path.read_text(), msgtype)
        store.register(types)
        for _consts, fields in types.values():
            pending.extend(t for _name, f in fields for t in _referenced(f) if t not in store.fielddefs)
    return store


def typestore_from_definition(msgtype: str, definition: str) -> Typestore:
    """A typestore knowing `msgtype` from a bag's stored definition (ros2msg: the type's text, then each referenced
    type after a line of '=' and a line 'MSG: pkg/Name'), for types no installed package defines."""
    store = get_typestore(Stores.ROS2_KILTED)
    sections = [section.strip("\n") for section in definition.split("=" * 80)]
    types = get_types_from_msg(sections[0], msgtype)
    for section in sections[1:]:
        header, _, text = section.partition("\n")
        name = header.removeprefix("MSG: ").strip()
        package, _, short = name.partition("/")
        full = name if name.count("/") == 2 else f"{package}/msg/{short}"
        if full not in store.fielddefs:
            types.update(get_types_from_msg(text, full))
    store.register(types)
    return store
