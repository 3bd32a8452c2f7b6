#!/usr/bin/env python3
"""zipcheck.py - zip helpers for tests/integration/nupkg.sh (Python's zipfile, independent of libzip).

  zipcheck.py compare ORIG WOVEN     every entry of ORIG but .signature.p7s is in WOVEN, in the same
                                     order; entries that are not assemblies LockTime weaves have the
                                     same raw (compressed) bytes, CRC, method, time and attributes;
                                     at least one assembly differs. Prints what differs; exit 1 then.
  zipcheck.py extract ZIP ENTRY OUT  write entry ENTRY of ZIP to the file OUT.
  zipcheck.py hostile KIND OUT       write a hostile package of kind KIND (see HOSTILE) to OUT.
"""
import re
import struct
import sys
import zipfile

# What locktime weaves (pkg_nupkg.c, nupkg_is_assembly): lib/<tfm>/... and runtimes/<rid>/lib/<tfm>/...
ASSEMBLY = re.compile(r'^(lib/[^/]+/|runtimes/[^/]+/lib/[^/]+/)(.*/)?[^/]+\.(dll|exe)$', re.IGNORECASE)
SIGNATURE = '.signature.p7s'

NUSPEC = (b'<?xml version="1.0" encoding="utf-8"?>\n'
          b'<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd"><metadata>'
          b'<id>Hostile.Test</id><version>1.0.0</version></metadata></package>\n')


def raw_bytes(path, info):
    """The compressed bytes of an entry, found through its local header (APPNOTE 4.3.7)."""
    with open(path, 'rb') as f:
        f.seek(info.header_offset)
        header = f.read(30)
        name_len, extra_len = struct.unpack('<HH', header[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        return f.read(info.compress_size)


def compare(orig, woven):
    a, b = zipfile.ZipFile(orig), zipfile.ZipFile(woven)
    problems = []
    want = [i.filename for i in a.infolist() if i.filename != SIGNATURE]
    got = [i.filename for i in b.infolist()]
    if want != got:
        problems.append('entry names or order differ:\n  want %s\n  got  %s' % (want, got))
    changed = 0
    rewritten = set()  # the woven assemblies' paths without their extension
    for x in a.infolist():
        if ASSEMBLY.match(x.filename) and x.filename in got and a.read(x) != b.read(b.getinfo(x.filename)):
            rewritten.add(x.filename.rsplit('.', 1)[0].lower())
    for x in a.infolist():
        if x.filename == SIGNATURE or x.filename not in got:
            continue
        y = b.getinfo(x.filename)
        if ASSEMBLY.match(x.filename):
            changed += a.read(x) != b.read(y)
            continue
        # The PDB beside a woven assembly is rewritten with it (ltcheck pdb checks it).
        if x.filename.lower().endswith('.pdb') and x.filename.rsplit('.', 1)[0].lower() in rewritten:
            continue
        for what in ('CRC', 'compress_type', 'date_time', 'external_attr', 'file_size', 'compress_size'):
            if getattr(x, what) != getattr(y, what):
                problems.append('%s: %s %r != %r' % (x.filename, what, getattr(x, what), getattr(y, what)))
        if raw_bytes(orig, x) != raw_bytes(woven, y):
            problems.append('%s: raw bytes differ' % x.filename)
    if not changed:
        problems.append('no assembly was changed')
    print('%d entries compared, %d assemblies changed' % (len(want), changed))
    for p in problems:
        print(p)
    return 1 if problems else 0


def patch_sizes(data, name, usize):
    """Set the declared uncompressed size of entry `name` in its local and central headers."""
    data = bytearray(data)
    n = name.encode()
    for sig, name_at, size_at in ((b'PK\x03\x04', 30, 22), (b'PK\x01\x02', 46, 24)):
        at = data.find(sig)
        while at >= 0:
            if data[at + name_at:at + name_at + len(n)] == n:
                struct.pack_into('<I', data, at + size_at, usize)
                break
            at = data.find(sig, at + 1)
    return bytes(data)


def package(out, entries, nuspec=NUSPEC):
    """A package of a .nuspec (unless None) and (name, bytes) entries, all deflated."""
    with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
        if nuspec is not None:
            z.writestr('Hostile.Test.nuspec', nuspec)
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


def hostile(kind, out):
    dll = b'MZ' + b'\0' * 62
    if kind == 'traversal':
        package(out, [('lib/net6.0/../../../evil.txt', b'escaped')])
    elif kind == 'absolute':
        package(out, [('/tmp/locktime-evil.txt', b'escaped')])
    elif kind == 'drive':
        package(out, [('C:/locktime-evil.txt', b'escaped')])
    elif kind == 'backslash':
        package(out, [('lib\\..\\..\\evil.txt', b'escaped')])
    elif kind == 'escaped-dots':
        package(out, [('lib/%2e%2e/%2e%2e/evil.txt', b'escaped')])
    elif kind == 'duplicate':
        import warnings
        warnings.simplefilter('ignore')  # zipfile warns about the duplicate name it writes
        package(out, [('lib/net6.0/A.dll', dll), ('lib/net6.0/A.dll', dll)])
    elif kind == 'duplicate-case':
        package(out, [('lib/net6.0/A.dll', dll), ('LIB/NET6.0/a.dll', dll)])
    elif kind == 'bomb':
        # 64 MiB of zeros that declares 1000 bytes: reading must stop at the declared size.
        package(out, [('lib/net6.0/Bomb.dll', b'\0' * (64 << 20))])
        with open(out, 'rb') as f:
            data = patch_sizes(f.read(), 'lib/net6.0/Bomb.dll', 1000)
        with open(out, 'wb') as f:
            f.write(data)
    elif kind == 'huge':
        # An entry declaring 4 GiB - 16 bytes: refused before anything is inflated.
        package(out, [('lib/net6.0/Huge.dll', dll)])
        with open(out, 'rb') as f:
            data = patch_sizes(f.read(), 'lib/net6.0/Huge.dll', 0xFFFFFFF0)
        with open(out, 'wb') as f:
            f.write(data)
    elif kind == 'many':
        package(out, [('content/%d.txt' % i, b'') for i in range(70000)])
    elif kind == 'no-nuspec':
        package(out, [('lib/net6.0/A.dll', dll)], nuspec=None)
    elif kind == 'bad-nuspec':
        package(out, [('lib/net6.0/A.dll', dll)], nuspec=b'<package><metadata><id>A</id>')
    elif kind == 'not-zip':
        with open(out, 'wb') as f:
            f.write(b'PK\x03\x04 this is not really a zip archive' * 10)
    else:
        raise SystemExit('zipcheck.py: unknown hostile kind ' + kind)


def main(argv):
    if len(argv) == 4 and argv[1] == 'compare':
        return compare(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == 'extract':
        with zipfile.ZipFile(argv[2]) as z, open(argv[4], 'wb') as f:
            f.write(z.read(argv[3]))
        return 0
    if len(argv) == 4 and argv[1] == 'hostile':
        hostile(argv[2], argv[3])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
