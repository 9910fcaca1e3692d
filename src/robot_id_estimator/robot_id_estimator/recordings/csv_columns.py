"""The CSV column layout load_recording reads, and column maps that read other logs' headers as that layout.

Our layout: `t` [s], `q_<joint>` [rad], `dq_<joint>` [rad/s], `ddq_<joint>` [rad/s²], `tau_<joint>` [Nm]. A column
map gives, for our names (keys), the file's column names (values). A key is a template, `t`, `q`, `dq`, `ddq` or
`tau`, whose value may hold `{i}` (the joint's number: 1-based index among the arm's joints) or `{joint}` (the joint
name), or an exact name such as `q_fer_joint1`; an exact name wins over a template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from robot_id_estimator.recordings.recording import DataError

TIME = "t"
SIGNALS = ("q", "dq", "ddq", "tau")
"""Per-joint signals in their CSV column prefixes; q, dq, ddq are smooth motion, tau is noisy torque."""

COLUMN_MAP_EXAMPLE = "t=t_s,q=q{i}_rad,dq=dq{i}_rad_s,tau=tau{i}_Nm"


def parse_column_map(text: str) -> dict[str, str]:
    """A column map from the command line's `KEY=COLUMN,KEY=COLUMN,...` (see COLUMN_MAP_EXAMPLE)."""
    column_map: dict[str, str] = {}
    for item in text.split(","):
        key, equals, column = (part.strip() for part in item.partition("="))
        if not (key and equals and column):
            raise DataError(f"column map '{text}': '{item.strip()}' is not KEY=COLUMN; expected e.g. "
                            f"{COLUMN_MAP_EXAMPLE}")
        if key in column_map:
            raise DataError(f"column map '{text}': {key} is mapped twice")
        column_map[key] = column
    return column_map


def resolve_columns(
    source: str, header: Sequence[str], column_map: Mapping[str, str] | None, joint_names: Sequence[str] | None
) -> tuple[dict[str, int], list[str]]:
    """Our column names (`t`, `q_<joint>`, ...) with their indices in `header`, in header order, and the file's
    columns left unused. Columns named in our layout count unless the map gives that name another column."""
    index = {name: i for i, name in enumerate(header)}
    mapped = _mapped_names(source, header, column_map or {}, joint_names)
    missing = {ours: theirs for ours, theirs in mapped.items() if theirs not in index}
    if missing:
        raise DataError(f"{source}: the column map names {sorted(set(missing.values()))} (for {list(missing)}), "
                        f"which the file does not have; its header is {list(header)}")
    sources: dict[str, str] = {}
    for ours, theirs in mapped.items():
        if theirs in sources:
            raise DataError(f"{source}: the column map reads the file's column '{theirs}' as both "
                            f"{sources[theirs]} and {ours}")
        sources[theirs] = ours
    columns = {name: i for name, i in index.items()
               if _in_our_layout(name) and name not in mapped and name not in sources}
    columns.update((ours, index[theirs]) for ours, theirs in mapped.items())
    used = set(columns.values())
    return dict(sorted(columns.items(), key=lambda item: item[1])), [
        name for i, name in enumerate(header) if i not in used
    ]


def _in_our_layout(name: str) -> bool:
    signal, underscore, joint = name.partition("_")
    return name == TIME or (signal in SIGNALS and bool(underscore) and bool(joint))


def _mapped_names(
    source: str, header: Sequence[str], column_map: Mapping[str, str], joint_names: Sequence[str] | None
) -> dict[str, str]:
    """Our column name -> the file's column name for every entry of the map, templates filled in per joint."""
    templates = {key: column for key, column in column_map.items() if key == TIME or key in SIGNALS}
    exact = {key: column for key, column in column_map.items() if key not in templates}
    unknown = [key for key in exact if not _in_our_layout(key)]
    if unknown:
        raise DataError(f"{source}: unknown column-map key(s) {unknown}; keys are t, q, dq, ddq, tau (templates, "
                        f"with {{i}} or {{joint}}) or our exact names such as q_<joint>; the file's header is "
                        f"{list(header)}")
    mapped = {}
    if TIME in templates:
        mapped[TIME] = _fill(source, TIME, templates[TIME])
    per_joint = [key for key in templates if key != TIME]
    if per_joint and joint_names is None:
        raise DataError(f"{source}: the column-map templates {per_joint} need joint_names: they are filled in for "
                        "each joint in that order")
    for signal in per_joint:
        for i, joint in enumerate(joint_names or (), start=1):
            mapped[f"{signal}_{joint}"] = _fill(source, signal, templates[signal], i=i, joint=joint)
    mapped.update(exact)
    return mapped


def _fill(source: str, key: str, template: str, **fields: int | str) -> str:
    try:
        return template.format(**fields)
    except (KeyError, IndexError, ValueError) as err:
        allowed = "no placeholder" if not fields else "only the placeholders {i} (1-based joint index) and {joint}"
        raise DataError(f"{source}: column-map entry {key}={template}: the template takes {allowed} "
                        f"({type(err).__name__}: {err})") from None
