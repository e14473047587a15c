"""Reading a file the core did not write: non-blocking, regular files only, within a bound."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.regular import NotRegular, TooLarge, open_folder, open_nonblocking, read_opened, read_regular


def test_a_file_within_the_bound_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    assert read_regular(tmp_path / "f", 3) == b"abc"


def test_a_file_one_byte_over_the_bound_is_too_large_with_its_size(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abcd")
    with pytest.raises(TooLarge) as caught:
        read_regular(tmp_path / "f", 3)
    assert (caught.value.size, caught.value.max_bytes) == (4, 3)


def test_not_whole_returns_the_first_bytes_of_a_longer_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abcdef")
    assert read_regular(tmp_path / "f", 4, whole=False) == b"abcd"


def test_a_file_that_grows_after_its_stat_is_still_too_large(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"ab")

    def grow(_stat: os.stat_result) -> None:
        with path.open("ab") as handle:  # after the fstat, before the read
            handle.write(b"cdef")

    with pytest.raises(TooLarge) as caught:
        read_regular(path, 3, check=grow)
    assert caught.value.size == 4  # what the bounded read saw: max_bytes + 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_without_a_writer_is_not_regular_and_never_blocks(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegular):
        read_regular(tmp_path / "pipe", 10)


def test_a_folder_is_not_regular(tmp_path: Path) -> None:
    with pytest.raises(NotRegular):
        read_regular(tmp_path, 10)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_an_endless_device_is_not_regular_and_is_never_read() -> None:
    with pytest.raises(NotRegular):
        read_regular("/dev/zero", 10)


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
def test_a_symlink_is_refused_without_follow_and_read_with_it(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    assert read_regular(tmp_path / "link", 5) == b"x"
    with pytest.raises(OSError) as caught:
        read_regular(tmp_path / "link", 5, follow=False)
    assert caught.value.errno in {errno.ELOOP, errno.EMLINK}


def test_a_path_relative_to_a_folder_descriptor_is_read_there(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f").write_bytes(b"in sub")
    folder = os.open(tmp_path / "sub", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_regular("f", 10, dir_fd=folder) == b"in sub"
    finally:
        os.close(folder)


def test_the_check_sees_the_stat_first_and_its_error_stops_the_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    seen: list[int] = []

    def refuse(stat: os.stat_result) -> None:
        seen.append(stat.st_size)
        raise LookupError("swapped")

    with pytest.raises(LookupError):
        read_regular(tmp_path / "f", 10, check=refuse)
    assert seen == [3]


@pytest.mark.parametrize("content", [b"ok", b"too long", b""])
def test_the_descriptor_is_closed_whatever_the_outcome(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "f").write_bytes(content)
    fd = open_nonblocking(tmp_path / "f")
    with contextlib.suppress(TooLarge):
        read_opened(fd, 3)
    with pytest.raises(OSError) as caught:
        os.fstat(fd)
    assert caught.value.errno == errno.EBADF


@settings(max_examples=100, deadline=None, database=None)
@given(content=st.binary(max_size=64), bound=st.integers(min_value=0, max_value=64), whole=st.booleans())
def test_any_content_is_returned_whole_within_the_bound_else_refused_or_cut(
    tmp_path_factory: pytest.TempPathFactory, content: bytes, bound: int, whole: bool
) -> None:
    path = tmp_path_factory.mktemp("regular") / "f"
    path.write_bytes(content)
    if len(content) <= bound:
        assert read_regular(path, bound, whole=whole) == content
    elif whole:
        with pytest.raises(TooLarge):
            read_regular(path, bound)
    else:
        assert read_regular(path, bound, whole=False) == content[:bound]


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
def test_a_folder_opens_and_a_symlink_or_file_in_its_place_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_bytes(b"x")
    os.close(open_folder(tmp_path / "real"))
    for name in ("link", "file"):
        with pytest.raises(OSError) as caught:
            open_folder(tmp_path / name)
        assert caught.value.errno in {errno.ENOTDIR, errno.ELOOP, errno.EMLINK}
