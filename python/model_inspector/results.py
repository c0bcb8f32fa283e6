"""Results as Python values, and their table-shaped parts as tables.

A result arrives as the JSON its C++ type writes (the same text as the CLI's
`--format json`, the dump files and the HTTP API; the schemas are in
docs/reference/schemas/), decoded into dicts and lists. Units are part of the
key names: `_ns` nanoseconds, `_us` microseconds, `_bytes` bytes, `share`
a 0..1 fraction.

A result is an object (`Result`, a dict) or, for a few analyses, an array of
rows (`ResultList`, a list). An array of objects is a table.
`Result.table(path)` (or `ResultList.table()`) gives one as a pandas
DataFrame when pandas is installed, else as a list of flat dicts; the
columns follow the CLI's table encoder (`analyze ID --format csv`): the keys
in first-seen order over all rows, a nested object's members as
"outer.inner".
"""

import json


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def _flatten(row, prefix, out):
    for key, value in row.items():
        if isinstance(value, dict):
            _flatten(value, prefix + key + ".", out)
        else:
            out[prefix + key] = value


def to_table(rows):
    """A list of dicts as a table: a pandas DataFrame when pandas is
    installed, else a list of flat dicts (nested objects' members as
    "outer.inner" keys). Columns are the keys in first-seen order."""
    flat = []
    columns = {}
    for row in rows:
        if not isinstance(row, dict):
            raise TypeError(f"a table row must be an object, found {type(row).__name__}")
        out = {}
        _flatten(row, "", out)
        for key in out:
            columns.setdefault(key, None)
        flat.append(out)
    pandas = _pandas()
    if pandas is None:
        return flat
    return pandas.DataFrame(flat, columns=list(columns))


def _is_table(value):
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def decode(text):
    """A result's JSON text as a `Result` (an object) or a `ResultList` (an
    array: findings, sequences, blocks)."""
    value = json.loads(text)
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return ResultList(value)
    raise TypeError(f"expected a JSON object or array, found {type(value).__name__}")


class ResultList(list):
    """A result that is an array of rows (`analyze("findings")`)."""

    def table(self):
        """The rows as a table (see `to_table`)."""
        return to_table(self)


class Result(dict):
    """A result: its JSON object as a dict, with its tables on request."""

    @classmethod
    def from_json(cls, text):
        value = json.loads(text)
        if not isinstance(value, dict):
            raise TypeError(f"expected a JSON object, found {type(value).__name__}")
        return cls(value)

    def at(self, path):
        """The value at a dotted path of object keys ("critical_path.tasks").
        KeyError names the first missing key."""
        value = self
        for key in path.split("."):
            if not isinstance(value, dict) or key not in value:
                raise KeyError(f"{path}: no '{key}' here")
            value = value[key]
        return value

    def table(self, path):
        """The array of objects at `path` as a table (see `to_table`)."""
        value = self.at(path)
        if not isinstance(value, list):
            raise TypeError(f"{path}: not an array but {type(value).__name__}")
        return to_table(value)

    def table_paths(self):
        """The dotted paths of every non-empty array of objects, outside
        other arrays, in written order."""
        paths = []

        def walk(obj, prefix):
            for key, value in obj.items():
                if _is_table(value):
                    paths.append(prefix + key)
                elif isinstance(value, dict):
                    walk(value, prefix + key + ".")

        walk(self, "")
        return paths

    def tables(self):
        """Every table of the result by its dotted path."""
        return {path: self.table(path) for path in self.table_paths()}
