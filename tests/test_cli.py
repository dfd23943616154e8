"""The `explorer` command: serving to a class behind a password, and its refusals."""

from __future__ import annotations

import http.cookiejar
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import psutil
import pytest

from explorer.cli import main, serve_arguments

from .ui.conftest import ROOT, _free_port, start_server, stop_server


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_share_without_a_password_is_refused(monkeypatch, tmp_path):
    monkeypatch.delenv("EXPLORER_PASSWORD", raising=False)
    out = subprocess.run([sys.executable, "-m", "explorer.cli", "serve", "--share",
                          "--port", "5999"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.returncode != 0 and "needs a password" in out.stderr
    short = tmp_path / "pw"
    short.write_text("abc\n")
    with pytest.raises(SystemExit, match="at least 8 characters"):
        main(["serve", "--share", "--password-file", str(short), "--port", "5999"])


def test_default_serve_is_local_and_share_names_its_origins():
    class Args:
        port, share, show, max_upload_mb, origin = 5006, False, False, 50.0, None

    local = serve_arguments(Args)
    assert local[local.index("--address") + 1] == "127.0.0.1"
    origins = [local[i + 1] for i, a in enumerate(local) if a == "--allow-websocket-origin"]
    assert origins == ["localhost:5006", "127.0.0.1:5006"]
    Args.share, Args.origin = True, ["teacher.example:5006"]
    shared = serve_arguments(Args)
    assert shared[shared.index("--address") + 1] == "0.0.0.0"
    assert [shared[i + 1] for i, a in enumerate(shared)
            if a == "--allow-websocket-origin"] == ["teacher.example:5006"]
    assert "*" not in shared


@pytest.mark.slow
def test_share_listens_everywhere_behind_a_login(tmp_path):
    password = tmp_path / "password"
    password.write_text("correct horse battery\n")
    port = _free_port()
    proc, url, port, log_path = start_server("--share", "--password-file", str(password),
                                             "--origin", f"127.0.0.1:{port}",
                                             log_name="share.log", port=port)
    try:
        listening = {c.laddr.ip for p in [psutil.Process(proc.pid)]
                     for c in p.net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == port}
        assert listening & {"0.0.0.0", "::"}, listening
        # without logging in, the app redirects to the login page
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as redirect:
            opener.open(f"{url}/explorer", timeout=10)
        redirect.value.close()
        assert redirect.value.code == 302 and "login" in redirect.value.headers["Location"]
        jar = http.cookiejar.CookieJar()
        session = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        wrong = urllib.parse.urlencode({"username": "class", "password": "nope"}).encode()
        session.open(f"{url}/login", data=wrong, timeout=10).close()
        assert not any(c.name == "user" for c in jar)
        good = urllib.parse.urlencode({"username": "class",
                                       "password": "correct horse battery"}).encode()
        session.open(f"{url}/login", data=good, timeout=10).close()
        assert any(c.name == "user" for c in jar)
        with session.open(f"{url}/explorer", timeout=30) as page:
            assert page.status == 200 and b"Feature Selection Explorer" in page.read()
        # the password never appears on a command line
        assert not any("correct horse" in " ".join(p.cmdline())
                       for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"])
    finally:
        stop_server(proc)


@pytest.mark.parametrize("argv, why", [
    (["--max-upload-mb", "nan"], "positive number of megabytes"),
    (["--max-upload-mb", "0"], "positive number of megabytes"),
    (["--max-upload-mb", "-5"], "positive number of megabytes"),
    (["--port", "70000"], "between 1 and 65535"),
    (["--num-procs", "0"], "--num-procs must be 1 or more"),
    (["--num-procs", "2", "--fit-processes", "2"], "use --fit-processes 0 with it"),
    (["--fit-processes", "-1"], "--fit-processes must be 0 or more"),
])
def test_bad_serve_options_are_refused_with_a_message(argv, why):
    with pytest.raises(SystemExit, match=why):
        main(["serve", *argv])
