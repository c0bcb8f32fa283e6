"""The errors of model_inspector: one class per status code of the C++ core.

Every failure of the core (a file that is not there, a broken input, a node a
level does not have, a bad parameter) raises a subclass of `Error` whose
message is the core's own, word for word: the same text the CLI prints after
"error: ". Each class also derives from the built-in exception that means the
same thing in Python, so `except LookupError` or `except OSError` catch them
too.
"""


class Error(Exception):
    """Any failure reported by model-inspector's core."""

    #: The core's status code name ("not found", "malformed input", ...).
    code = None

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class InvalidArgument(Error, ValueError):
    """The caller asked for something impossible (an unknown parameter,
    level or mode, a value out of range)."""

    code = "invalid argument"


class NotFound(Error, LookupError):
    """A file, node, run, analysis or key does not exist."""

    code = "not found"


class MalformedInput(Error, ValueError):
    """An input file is broken; the message names the file and the place."""

    code = "malformed input"


class Unsupported(Error, NotImplementedError):
    """A valid input that model-inspector does not handle."""

    code = "unsupported"


class IoError(Error, OSError):
    """The operating system refused a read or a write."""

    code = "i/o error"


class MemoryLimit(Error, MemoryError):
    """Loading would need more memory than the limit allows
    (`memory_limit=` of `open`, or the process's budget)."""

    code = "memory limit"


class Internal(Error, RuntimeError):
    """A bug in model-inspector."""

    code = "internal"


_BY_CODE = {cls.code: cls for cls in (InvalidArgument, NotFound, MalformedInput,
                                      Unsupported, IoError, MemoryLimit, Internal)}


def from_status(code, message):
    """The exception for a status code name of the core and its message (the
    extension module raises what this returns)."""
    return _BY_CODE.get(code, Error)(message)
