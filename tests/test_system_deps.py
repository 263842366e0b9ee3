"""`scripts/system-deps`, the step `make test` runs first: present → nothing; missing →
installed with apt-get; impossible to install → one line saying what to install, non-zero.

Each case runs the real script with a PATH of fake `apt-get`, `id` and `sudo` (shell scripts
that record their arguments) and the two looked-for paths pointed into a temporary folder.
"""

import os
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "system-deps"


def tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def run(tmp: Path, *, uid: int, apt: bool, sudo: bool) -> subprocess.CompletedProcess[str]:
    """The script with chromium and PostgreSQL absent until a fake apt-get 'installs' them."""
    fake = tmp / "bin"
    fake.mkdir(exist_ok=True)
    chromium = tmp / "chromium"
    pg_bin = tmp / "postgresql" / "15" / "bin"
    log = tmp / "calls.log"
    tool(fake, "id", f'[ "$1" = "-u" ] && echo {uid}')
    if apt:
        install = (
            f'echo "apt-get $*" >> {log}\n'
            f'if [ "$1" = "install" ]; then\n'
            f"  printf '#!/bin/sh\\n' > {chromium}; chmod +x {chromium}\n"
            f"  mkdir -p {pg_bin}; touch {pg_bin}/initdb\n"
            "fi"
        )
        tool(fake, "apt-get", install)
    if sudo:
        tool(fake, "sudo", f'echo "sudo $*" >> {log}\n[ "$1" = "-n" ] && shift\n"$@"')
    env = {
        "PATH": f"{fake}:{_system_bin(tmp, hide_apt=not apt)}",
        "ARENA_CHROMIUM": str(chromium),
        "ARENA_PG_BIN_GLOB": str(tmp / "postgresql" / "*" / "bin" / "initdb"),
        "HOME": str(tmp),
    }
    return subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _system_bin(tmp: Path, *, hide_apt: bool) -> str:
    """A folder of links to the machine's /usr/bin and /bin tools without its own sudo (and
    apt-get when hidden), so only the fakes decide what the script can do."""
    folder = tmp / ("sysbin-noapt" if hide_apt else "sysbin")
    hidden = {"sudo", "id", "apt-get"} if hide_apt else {"sudo", "id"}
    if not folder.exists():
        folder.mkdir()
        for source in (Path("/usr/bin"), Path("/bin")):
            for entry in source.iterdir():
                target = folder / entry.name
                if entry.name in hidden or target.exists():
                    continue
                os.symlink(entry, target)
    return str(folder)


def test_nothing_to_do_when_both_are_present(tmp_path: Path) -> None:
    (tmp_path / "postgresql" / "15" / "bin").mkdir(parents=True)
    (tmp_path / "postgresql" / "15" / "bin" / "initdb").touch()
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    done = run(tmp_path, uid=0, apt=True, sudo=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (tmp_path / "calls.log").exists()


def test_missing_packages_are_installed_as_root(tmp_path: Path) -> None:
    done = run(tmp_path, uid=0, apt=True, sudo=False)
    assert done.returncode == 0, done.stderr
    assert "installing chromium postgresql" in done.stdout
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[-1].startswith("apt-get install -y")
    assert calls[-1].endswith("chromium postgresql")
    again = run(tmp_path, uid=0, apt=True, sudo=False)  # idempotent: now present
    assert again.returncode == 0 and again.stdout == ""


def test_a_user_with_sudo_installs_through_it(tmp_path: Path) -> None:
    done = run(tmp_path, uid=1000, apt=True, sudo=True)
    assert done.returncode == 0, done.stderr
    assert "sudo -n apt-get install" in (tmp_path / "calls.log").read_text()


def test_no_privileges_stops_with_one_line(tmp_path: Path) -> None:
    done = run(tmp_path, uid=1000, apt=True, sudo=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "needs root" in done.stderr
    assert "sudo apt-get install chromium postgresql" in done.stderr


def test_another_os_stops_with_one_line(tmp_path: Path) -> None:
    done = run(tmp_path, uid=0, apt=False, sudo=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "no apt-get" in done.stderr and "install chromium postgresql" in done.stderr


def test_make_test_runs_it_before_pytest() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "test: system-deps" in makefile
    assert "scripts/system-deps" in makefile
    ci = (ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line and not line.startswith("#")][-1] == (
        "exec make test"
    )
