"""An aiosmtpd handler for the mail tests: each message it accepts is
written to DIRECTORY as N.eml (the DATA exactly as received, after
dot-unstuffing) and N.json (envelope: mail_from, rcpt_tos), N.json last so
that a reader seeing it finds both complete.

    PYTHONPATH=tests/integration /usr/bin/python3 -m aiosmtpd -n \\
        -l 127.0.0.1:PORT -c smtp_sink.Sink DIRECTORY
"""
import itertools
import json
import os


class Sink:
    def __init__(self, directory):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        # Unique across restarts of the server on one directory.
        self.names = ("%d-%d" % (os.getpid(), n) for n in itertools.count(1))

    @classmethod
    def from_cli(cls, parser, *args):
        if len(args) != 1:
            parser.error("smtp_sink.Sink takes one argument: DIRECTORY")
        return cls(args[0])

    async def handle_DATA(self, server, session, envelope):
        base = os.path.join(self.directory, next(self.names))
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content)
        os.rename(base + ".eml.tmp", base + ".eml")
        with open(base + ".json.tmp", "w") as f:
            json.dump({"mail_from": envelope.mail_from,
                       "rcpt_tos": envelope.rcpt_tos}, f)
        os.rename(base + ".json.tmp", base + ".json")
        return "250 Message accepted for delivery"
