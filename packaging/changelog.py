#!/usr/bin/env python3
"""Writes the packages' changelog.Debian.gz: a package with a Debian revision
must carry one (Debian policy 12.7, lintian's debian-changelog-file-missing),
and its top entry must name the version the package has. There is no hand
kept changelog to copy, so the one entry says only which release it is.

  changelog.py --package NAME --version 0.1.0-1 --maintainer 'N <e>' --out FILE
"""
import argparse
import datetime
import email.utils
import gzip
import os


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--package", "--version", "--maintainer", "--out"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else datetime.datetime.now(
        datetime.timezone.utc)
    text = (f"{args.package} ({args.version}) unstable; urgency=medium\n\n"
            f"  * pcieval {args.version.rsplit('-', 1)[0]}, packaged by CPack (make deb).\n\n"
            f" -- {args.maintainer}  {email.utils.format_datetime(moment)}\n")
    with open(args.out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9,
                                                   mtime=0) as out:
        out.write(text.encode())


if __name__ == "__main__":
    main()
