"""The class's accounts on the local hub, made by the teacher: for each student a password (printed
here once, stored only as a salted scrypt hash in the hub's accounts file, mode 0600) and a system
user of the same name whose home (mode 0700) holds the student's copy of the lab notebook. The hub
(jupyterhub_config.py, its local route) logs in only these names with these passwords and runs each
student's server as that student's system user, so one student's code cannot read another's files.

    sudo .venv/bin/python deploy/jupyterhub/accounts.py alice bob carol      # prints "alice <password>" lines
    sudo .venv/bin/python deploy/jupyterhub/accounts.py --remove alice       # the account, user and home go

Creating system users needs root. A name must be a new system user: a name that already exists on
the machine (root, a colleague) is refused, so that no student's server runs as someone else.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAB_NOTEBOOK = REPO / "notebooks" / "03_interactive_lab.ipynb"
ACCOUNTS_FILE = "accounts.json"  # in the hub's folder (its working directory, beside its database)
NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")  # what useradd and JupyterHub (lower-case names) both take
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read off a sheet of paper
PASSWORD_LENGTH = 10  # about 50 bits
SCRYPT = {"n": 2**14, "r": 8, "p": 1}  # about 16 MB and 50 ms a check


def hash_password(password: str) -> str:
    """``scrypt$<salt>$<hash>`` (base64): what the accounts file keeps of a password."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT)
    return "$".join(("scrypt", base64.b64encode(salt).decode(), base64.b64encode(digest).decode()))


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` (from ``hash_password``) was made from."""
    _, salt, digest = stored.split("$")
    attempt = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), **SCRYPT)
    return hmac.compare_digest(attempt, base64.b64decode(digest))


def read_accounts(path: Path) -> dict[str, str]:
    """{student name: stored password hash}; {} where the file does not exist yet."""
    return json.loads(path.read_text()) if path.exists() else {}


def write_accounts(path: Path, accounts: dict[str, str]) -> None:
    """Replace the accounts file at once, readable and writable by its owner only (0600)."""
    partial = path.with_suffix(".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(accounts, file, indent=1, sort_keys=True)
    os.chmod(partial, 0o600)  # a partial file left by an interrupted run may have had another mode
    os.replace(partial, path)


def name_problem(name: str, accounts: dict[str, str], adding: bool) -> str | None:
    """Why ``name`` cannot be added (``adding``) or removed, or None."""
    if not NAME.fullmatch(name):
        return f"student name {name!r} is not valid: must be 1 to 32 lower-case letters, digits, '-' or '_', starting with a letter"
    if adding and name in accounts:
        return f"student {name!r} already has an account (--remove it first to give a new password)"
    if adding and system_user_exists(name):
        return f"student name {name!r} is not valid: a system user of that name already exists on this machine"
    if not adding and name not in accounts:
        return f"student {name!r} has no account here (accounts: {', '.join(sorted(accounts)) or 'none'})"
    return None


def system_user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def create_system_user(name: str, homes: Path) -> None:
    """The student's system user (a group of its own, no login shell) and a private home holding a
    copy of the lab notebook, all owned by the student."""
    home = homes / name
    subprocess.run(["useradd", "--home-dir", str(home), "--create-home", "--user-group", "--shell", "/usr/sbin/nologin", name], check=True)
    user = pwd.getpwnam(name)
    notebooks = home / "notebooks"
    notebooks.mkdir()
    shutil.copy(LAB_NOTEBOOK, notebooks / LAB_NOTEBOOK.name)
    for path in (notebooks, notebooks / LAB_NOTEBOOK.name):
        os.chown(path, user.pw_uid, user.pw_gid)
    home.chmod(0o700)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", help="the students' user names (lower-case letters, digits, '-', '_')")
    parser.add_argument("--hub-dir", type=Path, default=REPO / "build" / "hub", help="the hub's folder, where `make hub` runs (default build/hub)")
    parser.add_argument("--homes", type=Path, default=Path("/home"), help="the folder that holds the students' homes (default /home)")
    parser.add_argument("--remove", action="store_true", help="remove these students: account, system user and home")
    args = parser.parse_args()
    path = args.hub_dir / ACCOUNTS_FILE
    accounts = read_accounts(path)
    for name in args.names:
        if problem := name_problem(name, accounts, adding=not args.remove):
            sys.exit(f"accounts.py: {problem}")
    if twice := sorted({name for name in args.names if args.names.count(name) > 1}):
        sys.exit(f"accounts.py: student name {twice[0]!r} is given twice")
    if os.geteuid() != 0:
        sys.exit(
            "accounts.py: must run as root: each student gets a system user of their own (sudo .venv/bin/python deploy/jupyterhub/accounts.py ...)"
        )
    args.hub_dir.mkdir(parents=True, exist_ok=True)
    args.hub_dir.chmod(0o700)  # the hub's database and accounts: no student's business
    for name in args.names:
        if args.remove:
            if system_user_exists(name):
                subprocess.run(["userdel", "--remove", name], check=True, stderr=subprocess.DEVNULL)
            del accounts[name]
        else:
            create_system_user(name, args.homes)
            password = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))
            accounts[name] = hash_password(password)
            print(name, password)  # the only time the password is shown: hand it to the student
        write_accounts(path, accounts)  # after each student: an error later leaves the earlier ones usable


if __name__ == "__main__":
    main()
