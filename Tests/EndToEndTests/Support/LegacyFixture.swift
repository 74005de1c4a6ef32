import Foundation
import Testing
import TripBoardSodium
import TripBoardKeys
import TripBoardModel

/// A version-1 TripBoard directory, written by Python's sqlite3 module from the format in issue 6
/// (never by TripBoard's own code), and the checks that a migration of it kept everything.
struct LegacyFixture: Codable {
    struct Trip: Codable { var id, name, start_date, end_date: String; var notes: String?; var updated_at: String }
    struct Place: Codable { var id, trip_id, name: String; var city: String?; var visited: Int }
    struct Booking: Codable { var id, trip_id, kind, title: String; var starts_at, reference: String? }
    struct Attachment: Codable { var id, booking_id, filename, relative_path, content_type, created_at: String }

    var trips: [Trip] = []
    var places: [Place] = []
    var bookings: [Booking] = []
    var attachments: [Attachment] = []
    /// Name in `Attachments/` → bytes, hex-encoded.
    var files: [String: String] = [:]
    /// `preferences.json`, as JSON text; nil: no file.
    var preferencesJSON: String?
    /// The half of the rows committed last stay only in `-wal`: the writer is SIGKILLed before it
    /// closes, with automatic checkpoints off.
    var walOnly = true

    static let accessToken = "legacy-access-" + UUID().uuidString
    static let refreshToken = "legacy-refresh-" + UUID().uuidString

    /// `count` bytes from `generator` in lowercase hex (what `String(format: "%02x")` per byte
    /// gave, a hundred times faster: fixtures of 100 KB files took a minute to make).
    static func hexOfRandomBytes<G: RandomNumberGenerator>(count: Int, using generator: inout G) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(count * 2)
        for _ in 0..<count {
            let byte = UInt8.random(in: 0...255, using: &generator)
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Trips with places, bookings and attachments: one attachment row whose file is missing, one
    /// file no row names, an uppercase id, a booking kind version 2 does not know, preferences with
    /// one refused and one unknown key, and both tokens.
    static func standard(trips tripCount: Int = 3, fileSize: Int = 3000, seed: UInt64 = 1) -> LegacyFixture {
        var generator = SeededGenerator(seed: seed)
        func id() -> String {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], 0x40 | bytes[6] & 0x0f, bytes[7],
                               0x80 | bytes[8] & 0x3f, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString.lowercased()
        }
        var fixture = LegacyFixture()
        for index in 0..<tripCount {
            let tripID = index == 0 ? id().uppercased() : id()
            fixture.trips.append(Trip(id: tripID, name: "Trip \(index)", start_date: "2027-0\(index % 9 + 1)-02",
                                      end_date: "2027-0\(index % 9 + 1)-05", notes: index % 2 == 0 ? nil : "notes \(index)",
                                      updated_at: "2026-01-0\(index % 9 + 1)T10:00:00Z"))
            fixture.places.append(Place(id: id(), trip_id: tripID, name: "Place \(index)", city: index % 2 == 0 ? "Lisbon" : nil,
                                        visited: index % 2))
            let bookingID = id()
            fixture.bookings.append(Booking(id: bookingID, trip_id: tripID, kind: index == 1 ? "ferry" : "Flight", title: "TP \(index)",
                                            starts_at: "2027-0\(index % 9 + 1)-02T07:35:00+00:00", reference: index % 2 == 0 ? "X\(index)" : nil))
            for (number, fileExtension) in ["pdf", "jpg"].enumerated() {
                let attachmentID = id()
                let name = "\(attachmentID).\(fileExtension)"
                fixture.attachments.append(Attachment(id: attachmentID, booking_id: bookingID, filename: "ticket-\(index)-\(number).\(fileExtension)",
                                                      relative_path: "Attachments/" + name, content_type: fileExtension == "pdf" ? "application/pdf" : "image/jpeg",
                                                      created_at: "2026-01-0\(index % 9 + 1)T11:00:00Z"))
                if !(index == 0 && number == 1) {  // this row's file is missing
                    fixture.files[name] = hexOfRandomBytes(count: fileSize, using: &generator)
                }
            }
        }
        fixture.files["stray-photo.png"] = "89504e470d0a1a0a" + String(repeating: "ab", count: 100)  // no row names it
        fixture.preferencesJSON = """
            {"preferredCurrency": "usd", "theme": "dark", "mapStyle": "neon", "showsVisitedPlaces": false, "foo": 1,
             "email": "traveller@example.com", "accessToken": "\(accessToken)", "refreshToken": "\(refreshToken)"}
            """
        return fixture
    }

    /// Writes the directory at `path` with Python's sqlite3 module.
    func write(to path: String) throws {
        let spec = try JSONEncoder().encode(self)
        let result = try ProcessRunner.run("/usr/bin/python3", ["-c", Self.writerScript, path], environment: ProcessRunner.environment(container: nil),
                                           stdin: Array(spec))
        #expect(walOnly ? result.wasSignaled : result.status == 0, "fixture writer: \(result)")
    }

    /// Checks the migration's invariants with Python: `final` after a finished migration,
    /// `interrupted` after a crash (one complete copy of every record and file exists). Returns
    /// the problems found (empty when all hold).
    /// `device` and `machineID`: the device whose class keys opened the migrated files (they are
    /// sealed; the checker opens them with `tools/lib/sealed_file.py`, a second implementation).
    func problems(container: String, legacy: String, searchRoot: String, final: Bool, device: String, machineID: String) throws -> [String] {
        let spec = try JSONEncoder().encode(self)
        var environment = ProcessRunner.environment(container: nil)
        environment["PYTHONPATH"] = Self.toolsLibrary
        let result = try ProcessRunner.run("/usr/bin/python3", ["-c", Self.checkerScript, container, legacy, searchRoot, final ? "final" : "interrupted",
                                                               Self.accessToken, Self.refreshToken, device, machineID],
                                           environment: environment, stdin: Array(spec))
        guard result.status == 0 else { return ["checker failed: \(result)"] }
        return result.stdoutLines
    }

    /// Writes a version-1 directory as TripBoard 1 did. Its `CREATE TABLE`s are TripBoard 1's
    /// schema, which `tools/lib/bench_migration.py` (`write_legacy`) writes too, deliberately the
    /// same text: the benchmark migrates what these tests migrate.
    static let writerScript = #"""
import json, os, signal, sqlite3, sys
root, spec = sys.argv[1], json.load(sys.stdin)
os.makedirs(os.path.join(root, "Attachments"), exist_ok=True)
os.makedirs(os.path.join(root, "Thumbnails", "small"), exist_ok=True)
with open(os.path.join(root, "Thumbnails", "small", "cached.png"), "wb") as f: f.write(b"thumbnail")
db = sqlite3.connect(os.path.join(root, "TripBoard.sqlite"), isolation_level=None)
assert db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
db.execute("PRAGMA wal_autocheckpoint=0")
db.executescript("""
CREATE TABLE trips (id TEXT PRIMARY KEY, name TEXT NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL, notes TEXT, updated_at TEXT NOT NULL);
CREATE TABLE places (id TEXT PRIMARY KEY, trip_id TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE, name TEXT NOT NULL, city TEXT, visited INTEGER NOT NULL DEFAULT 0);
CREATE TABLE bookings (id TEXT PRIMARY KEY, trip_id TEXT NOT NULL REFERENCES trips(id) ON DELETE CASCADE, kind TEXT NOT NULL, title TEXT NOT NULL, starts_at TEXT, reference TEXT);
CREATE TABLE attachments (id TEXT PRIMARY KEY, booking_id TEXT NOT NULL REFERENCES bookings(id) ON DELETE CASCADE, filename TEXT NOT NULL, relative_path TEXT NOT NULL, content_type TEXT NOT NULL, created_at TEXT NOT NULL);
PRAGMA user_version = 1;
""")
def insert(rows):
    db.execute("BEGIN")
    for table, row in rows:
        db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    db.execute("COMMIT")
rows = [(t, r) for t in ("trips", "places", "bookings", "attachments") for r in spec[t]]
split = len(rows) // 2 if spec["walOnly"] else len(rows)
insert(rows[:split])
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
for name, content in spec["files"].items():
    with open(os.path.join(root, "Attachments", name), "wb") as f: f.write(bytes.fromhex(content))
if spec.get("preferencesJSON") is not None:
    with open(os.path.join(root, "preferences.json"), "w") as f: f.write(spec["preferencesJSON"])
if spec["walOnly"]:
    insert(rows[split:])
    assert os.path.getsize(os.path.join(root, "TripBoard.sqlite-wal")) > 0
    os.kill(os.getpid(), signal.SIGKILL)  # before close: the last commits stay only in -wal
db.close()
"""#

    /// `tools/lib`, where `sealed_file.py` is.
    static let toolsLibrary = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../tools/lib").standardized.path

    static let checkerScript = #"""
import hashlib, json, os, sqlite3, sys
import sealed_file
container, legacy, search_root, mode, access, refresh, device, machine_id = sys.argv[1:9]
spec = json.load(sys.stdin)
problems = []
files = {name: bytes.fromhex(content) for name, content in spec["files"].items()}
def stamp(text): return text.replace("Z", ".000Z") if "." not in text else text
def kind(text): return text.lower() if text.lower() in ("flight", "train", "hotel", "car", "event", "other") else "other"
expected = {
 "trips": {t["id"].lower(): (t["name"], t["start_date"], t["end_date"], t.get("notes") or "", "pendingUpload", None, stamp(t["updated_at"])) for t in spec["trips"]},
 "places": {p["id"].lower(): (p["trip_id"].lower(), p["name"], p.get("city"), p["visited"], "pendingUpload", None) for p in spec["places"]},
 "bookings": {b["id"].lower(): (b["trip_id"].lower(), kind(b["kind"]), b["title"], b.get("starts_at"), b.get("reference"), "pendingUpload", None) for b in spec["bookings"]},
 "attachments": {},
}
named = set()
for a in spec["attachments"]:
    name = a["relative_path"].split("/")[-1]
    named.add(name)
    data = files.get(name)
    ext = name.rsplit(".", 1)[-1]
    path = f"attachments/{a['id'].lower()[:2]}/{a['id'].lower()}.{ext}"
    expected["attachments"][a["id"].lower()] = (a["booking_id"].lower(), a["filename"], a["content_type"],
        len(data) if data is not None else 0, hashlib.blake2b(data, digest_size=32).hexdigest() if data is not None else "",
        None, path, "present" if data is not None else "missing", stamp(a["created_at"]), "pendingUpload", None)
queries = {
 "trips": "SELECT id, name, start_date, end_date, notes, sync_state, remote_version, updated_at FROM trips",
 "places": "SELECT id, trip_id, name, city, visited, sync_state, remote_version FROM places",
 "bookings": "SELECT id, trip_id, kind, title, starts_at, reference, sync_state, remote_version FROM bookings",
 "attachments": "SELECT id, booking_id, original_filename, content_type, byte_count, content_hash, page_count, relative_path, state, created_at, sync_state, remote_version FROM attachments",
}
committed = os.path.exists(os.path.join(container, "migration", "committed.json"))
keys = None
def read_store(path, legacy_schema):
    if os.path.exists(path + "-key"):
        # A sealed store: its pages opened by the second implementation into a plain copy.
        import sealed_store, tempfile
        global keys
        if keys is None: keys = sealed_file.class_keys(device, machine_id)
        copy = os.path.join(tempfile.mkdtemp(), "store.sqlite")
        sealed_store.plain_copy(path, copy, keys)
        path = copy
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    result = {"integrity": db.execute("PRAGMA integrity_check").fetchall(), "fk": db.execute("PRAGMA foreign_key_check").fetchall()}
    if not legacy_schema:
        for table, sql in queries.items():
            result[table] = {row[0]: tuple(row[1:]) for row in db.execute(sql)}
    else:
        result["ids"] = {t: {r[0].lower() for r in db.execute(f"SELECT id FROM {t}")} for t in queries}
    db.close()
    return result
keys = None
def contents(path):
    """A file's bytes: a sealed file's plaintext (opened with the device's class keys)."""
    global keys
    try:
        with open(path, "rb") as f: data = f.read()
    except FileNotFoundError: return None
    if not data.startswith(sealed_file.MAGIC): return data
    if keys is None: keys = sealed_file.class_keys(device, machine_id)
    try: return sealed_file.open_sealed(data, *keys)
    except Exception as error: return b"unopenable: " + str(error).encode()
if mode == "final" or committed:
    store = read_store(os.path.join(container, "store", "TripBoard.sqlite"), False)
    hashing = os.path.exists(os.path.join(container, "migration", "hashing.json"))
    if hashing:
        # The hashing pass is due (killed, or not yet run): a row may still be unverified (''),
        # never wrong. A finished run has no marker and every hash.
        if mode == "final": problems.append("the hashing pass did not finish")
        for key, row in list(store["attachments"].items()):
            if row[4] == "" and row[7] == "present" and key in expected["attachments"]:
                store["attachments"][key] = row[:4] + (expected["attachments"][key][4],) + row[5:]
    if store["integrity"] != [("ok",)]: problems.append(f"integrity_check: {store['integrity']}")
    if store["fk"]: problems.append(f"foreign_key_check: {store['fk']}")
    for table in queries:
        if store[table] != expected[table]:
            missing = set(expected[table]) - set(store[table])
            different = [k for k in expected[table] if k in store[table] and store[table][k] != expected[table][k]]
            problems.append(f"{table}: {len(missing)} missing, {len(set(store[table]) - set(expected[table]))} extra, different: "
                            + "; ".join(f"{store[table][k]} != {expected[table][k]}" for k in different[:2]))
    for row in expected["attachments"].values():
        if row[7] == "present":
            path = os.path.join(container, row[6])
            if contents(path) is None or hashlib.blake2b(contents(path), digest_size=32).hexdigest() != row[4]:
                problems.append(f"attachment file {row[6]} missing or wrong")
            elif os.stat(path).st_mode & 0o777 != 0o600: problems.append(f"{row[6]} is not 0600")
    recovered_dir = os.path.join(container, "attachments", "recovered")
    recovered = sorted(os.listdir(recovered_dir)) if os.path.isdir(recovered_dir) else []
    for name, data in files.items():
        if name not in named and not any(contents(os.path.join(recovered_dir, r)) == data for r in recovered):
            problems.append(f"file without a row {name} not in attachments/recovered")
    with open(os.path.join(container, "preferences", "preferences.json")) as f: prefs = json.load(f)
    if prefs != {"currency": "USD", "theme": "dark", "showsVisitedPlaces": False}: problems.append(f"preferences: {prefs}")
    if os.path.exists(os.path.join(container, "migration", "journal.json")) and mode == "final": problems.append("journal still there")
    if mode == "final" and os.path.exists(legacy): problems.append("the old location still exists")
    if not committed: problems.append("no commit marker")
else:
    # Interrupted before the commit marker: the old location is complete, file by file (each in
    # the old place or, renamed, at its destination), and the legacy store holds every record.
    old = read_store(os.path.join(legacy, "TripBoard.sqlite"), True)
    if old["integrity"] != [("ok",)]: problems.append(f"legacy integrity_check: {old['integrity']}")
    for table in queries:
        if old["ids"][table] != set(expected[table]): problems.append(f"legacy {table} lost rows")
    for a in spec["attachments"]:
        name = a["relative_path"].split("/")[-1]
        if name in files:
            row = expected["attachments"][a["id"].lower()]
            if contents(os.path.join(legacy, "Attachments", name)) != files[name] and contents(os.path.join(container, row[6])) != files[name]:
                problems.append(f"no complete copy of {name}")
for directory, _, names in os.walk(search_root):
    for name in names:
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isfile(path): continue
        data = contents(path) or b""
        if mode == "final" and (access.encode() in data or refresh.encode() in data): problems.append(f"a token is in plain text in {path}")
print("\n".join(problems))
"""#
}

/// A deterministic random number generator (SplitMix64), so fixtures are the same every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
