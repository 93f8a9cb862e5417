"""The local hub's login: a name and password checked against the accounts file that accounts.py
writes (one salted scrypt hash per student). Unknown names and wrong passwords are refused alike; the
file is read at each login, so students added during a class can log in at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from accounts import ACCOUNTS_FILE, check_password, hash_password, read_accounts
from jupyterhub.auth import Authenticator
from traitlets import Unicode

UNKNOWN_NAME = hash_password("")  # checked against for a name with no account: a refusal takes as long either way


class PasswordFileAuthenticator(Authenticator):
    accounts_file = Unicode(ACCOUNTS_FILE, config=True, help="accounts.py's file of password hashes (relative: to the hub's working folder)")

    async def authenticate(self, handler, data):
        """``data``: the login form ({"username", "password"}); the name if the password is that
        account's, else None."""
        name, password = self.normalize_username(data.get("username", "")), data.get("password", "")
        stored = read_accounts(Path(self.accounts_file)).get(name)
        matches = await asyncio.to_thread(check_password, password, stored or UNKNOWN_NAME)
        return name if stored is not None and matches else None
