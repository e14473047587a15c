"""Where the command line's and the servers' log records go: stderr, warnings and up (or the level asked), credentials
masked.

The library attaches only a ``NullHandler`` (``retriever/__init__``): a host application decides where the
``retriever.*`` records go.  The ``retriever`` command is such a host; it calls ``to_stderr`` once it starts,
and the servers call it again with a format that names each record's level and logger.
"""

from __future__ import annotations

import logging
import sys

from retriever.redaction import mask_url
from retriever.text.safe import one_line, terminal_text

PLAIN = "%(message)s"  # a command's warning reads as a sentence, as Python's last-resort handler printed it
NAMED = "%(levelname)s %(name)s: %(message)s"  # a server's log: which part spoke, and how loudly


class MaskCredentials(logging.Filter):
    """Masks URL passwords in every record a handler writes (a Redis URL in a warning, say), and writes its message on
    one line with control characters escaped: a file name from the tree holding ESC or a line break (in a debug
    record) can neither drive the operator's terminal nor forge a line of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = one_line(mask_url(record.getMessage())), None
        if record.exc_info and not record.exc_text:
            record.exc_text = terminal_text(mask_url(logging.Formatter().formatException(record.exc_info)))
        return True


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record comes, as ``logging.lastResort`` does.

    A stream bound once would outlive a replaced ``sys.stderr`` (click's test runner swaps it per call).
    """

    def __init__(self) -> None:
        logging.Handler.__init__(self, logging.WARNING)
        self.addFilter(MaskCredentials())

    @property
    def stream(self) -> object:
        return sys.stderr


def to_stderr(fmt: str = PLAIN, level: str = "warning") -> None:
    """Send records to stderr in ``fmt``, URL passwords masked: the ``retriever.*`` ones from ``level`` up
    (``RETRIEVER_LOG_LEVEL``: "info" adds the access log); every other library's from warnings up at most (the
    root logger's level: at "info", the MCP SDK and httpx would write a line of their own per call).

    One handler per process: a later call only changes its format and level.  The root logger gets it, so the
    servers' own loggers (uvicorn's) are written the same way.
    """
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _Stderr)), None)
    if handler is None:
        handler = _Stderr()
        root.addHandler(handler)
        root.setLevel(min(root.level or logging.WARNING, logging.WARNING))
    handler.setFormatter(logging.Formatter(fmt))
    handler.setLevel(_LEVELS[level])
    logging.getLogger("retriever").setLevel(_LEVELS[level])


_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
