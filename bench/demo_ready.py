"""Benchmark: `make demo` in a fresh clone, until the dashboard answers and Home renders.

Run: .venv/bin/python bench/demo_ready.py [--commit HEAD] [--port 8599] [--season]

What it does: clones this repository at `--commit` into a temporary folder, links this
checkout's .venv into it (the venv exists; `make -o` keeps make from reinstalling it), runs
`make demo PORT=…` there in its own process group and measures, from the start of `make`:

- health: until `/_stcore/health` answers `ok` (the server is up, the schema written);
- home: until Home has rendered in Debian's chromium (Playwright; the app idle, its title
  drawn) and shows the season's progress line ("still playing", the simulated date);
- with `--season`: until the season has finished (the launcher says so), then a second
  `make demo` in the same clone must reuse the database (its health time is printed too).

Then it stops `make demo` as Ctrl-C does (SIGINT to the process group) and checks that no
process of it is left. Prints the load average at the start and the end.
"""

import argparse
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
            return bool(r.read().decode() == "ok")
    except OSError:
        return False


def start(clone: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = ["make", "-o", ".venv/.installed-stamp", "demo", f"PORT={port}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    with open(log, "ab") as out:
        return subprocess.Popen(
            command,
            cwd=clone,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for(check: object, timeout: float, what: str) -> float:
    began = time.perf_counter()
    while time.perf_counter() - began < timeout:
        if check():  # type: ignore[operator]
            return time.perf_counter() - began
        time.sleep(0.1)
    raise SystemExit(f"{what}: not within {timeout:.0f} s")


def home_text(port: int, timeout_ms: float) -> str:
    """Home's text once rendered in chromium (app idle, no skeleton, a title drawn)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/", timeout=timeout_ms)
        page.wait_for_function(
            """() => {
                const app = document.querySelector('[data-testid=stApp]');
                return app && app.getAttribute('data-test-script-state') === 'notRunning'
                    && !document.querySelector('[data-testid=stSkeleton]')
                    && document.querySelector('h1');
            }""",
            timeout=timeout_ms,
        )
        text = page.inner_text("body")
        browser.close()
    return text


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C: SIGINT to the whole process group, then check it is gone."""
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise SystemExit("make demo did not stop on SIGINT within 30 s") from None
    time.sleep(1)
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return
    os.killpg(process.pid, signal.SIGKILL)
    raise SystemExit("a process of make demo outlived Ctrl-C")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--port", type=int, default=8599)
    parser.add_argument("--season", action="store_true", help="also wait for the season, reuse")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", "--shared", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", args.commit], cwd=clone, check=True)
        (clone / ".venv").symlink_to(ROOT / ".venv")
        log = Path(tmp) / "make.log"
        print(f"commit {args.commit}   load at start {load()}")
        began = time.perf_counter()
        process = start(clone, args.port, log)
        try:
            health = wait_for(lambda: healthy(args.port), 120, "health")
            print(f"make demo → /_stcore/health ok: {health:.1f} s")
            text = home_text(args.port, 60_000)
            print(f"make demo → Home rendered: {time.perf_counter() - began:.1f} s")
            progress = [line for line in text.splitlines() if "still playing" in line]
            print(f"Home's progress line: {progress[0] if progress else '(none: season done?)'}")
            if args.season:
                launcher_log = log
                wait_for(
                    lambda: "season has finished" in launcher_log.read_text(errors="replace"),
                    1800,
                    "the season",
                )
                print(
                    f"season finished: {time.perf_counter() - began:.1f} s after make demo started"
                )
        finally:
            stop(process)
        print(f"stopped by SIGINT, no process left   load at end {load()}")
        if args.season:
            began = time.perf_counter()
            process = start(clone, args.port, log)
            try:
                health = wait_for(lambda: healthy(args.port), 120, "health (reuse)")
                print(f"second make demo → health ok: {health:.1f} s")
                reused = "reusing data/demo.db" in log.read_text(errors="replace")
                print(f"second make demo reused the finished season: {reused}")
            finally:
                stop(process)


if __name__ == "__main__":
    main()
