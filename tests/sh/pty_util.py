"""What the shell tests that drive ./run through a pseudo-terminal share (test_chat.sh)."""
import os, re, select, signal, time

ESCAPES = re.compile(rb'\x1b\[[0-9;?]*[A-Za-z~]')


def plain(b):
    """The bytes without the terminal's control sequences (the line editor's redraws, paste mode)."""
    return ESCAPES.sub(b'', b)


def read_until(fd, want, timeout=60, strip=False):
    """What the pty shows until want(bytes so far) is true, the child closes it, or timeout; strip: the
    control sequences taken out as it goes (want sees the plain text)."""
    buf = b''
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf = plain(buf + chunk) if strip else buf + chunk
            if want(buf):
                return buf
    return buf


def send(fd, data):
    while data:
        data = data[os.write(fd, data):]


def status(pid, timeout=30):
    """The child's exit status, or 'hung' (then killed) after timeout."""
    end = time.time() + timeout
    while time.time() < end:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            return os.waitstatus_to_exitcode(st)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return 'hung'
