"""The exceptions profcodec raises. Every one is a :class:`profcodec.Error`."""

from typing import Optional


class Error(Exception):
    """Base class of every profcodec error.

    Attributes:
        message: what is wrong, in words, then the field and the byte offset where that
            applies (for example ``profile.db: at byte 0x1c: ...``).
        offset: the byte offset of the damage in the file, when the decoder knows it.
    """

    def __init__(
        self, message: str, offset: Optional[int] = None, errno: Optional[int] = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        if errno is not None:
            self.errno = errno

    def __str__(self) -> str:
        return self.message


class InvalidDataError(Error, ValueError):
    """The input, or a file of its database, folder or session, is damaged."""


class UnknownFormatError(Error, ValueError):
    """The input is not a profile profcodec knows (no known magic, or a folder that is no
    database, measurement folder or session)."""


class UnsupportedError(Error):
    """The input cannot give what was asked: a trace holds no metric values, a lone
    profile.db has no context tree."""


class QueryError(Error, ValueError):
    """A question the profile cannot answer: an unknown metric (the message lists the known
    ones), units that differ between the two profiles of a diff."""


class FileError(Error, OSError):
    """A file could not be read (``errno`` is set when the system gave one)."""
