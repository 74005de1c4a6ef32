import Foundation
import Testing

/// A full disk is reported as a full disk (exit 74), never as a damaged file, and changes nothing.
@Suite struct FullDiskTests {
    /// A small tmpfs holding the whole test root (container and all), mounted for `body`; `nil`
    /// (the test is skipped, saying why) where mounting is not allowed.
    private func withSmallFilesystem(_ body: (String) throws -> Void) throws {
        let mountPoint = NSTemporaryDirectory() + "tripboard-full-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let environment = ProcessRunner.environment(container: nil)
        let mount = try ProcessRunner.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint], environment: environment)
        guard mount.status == 0 else {
            print("skipping the full-disk test: mount -t tmpfs is not allowed here (\(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
            return
        }
        defer { _ = try? ProcessRunner.run("/bin/umount", ["-l", mountPoint], environment: environment) }
        try body(mountPoint)
    }

    /// Fills the filesystem of `directory` with one file there, to its last byte.
    private func fill(_ directory: String) throws -> String {
        let filler = directory + "/filler"
        let result = try ProcessRunner.run("/bin/dd", ["if=/dev/zero", "of=" + filler, "bs=4096"], environment: ProcessRunner.environment(container: nil))
        #expect(result.stderr.contains("No space left on device"), "\(result)")
        return filler
    }

    /// The thumbnail is sealed into the container's `tmp/`, which is full: the command says the
    /// disk is full (it once called the PDF damaged, exit 65), leaves nothing behind, and works
    /// once there is space again.
    @Test func aThumbnailOnAFullDiskSaysTheDiskIsFull() throws {
        try withSmallFilesystem { mountPoint in
            let container = try TestContainer(base: mountPoint)
            try container.addTrip("Paris", start: "2026-12-10", end: "2026-12-14")
            let shared = try container.shareOK(try container.input(TicketPDF.make(lines: TicketPDF.boardingPass), as: "ticket.pdf"))
            let id = try #require((shared["attachment"] as? [String: Any])?["id"] as? String)
            try container.appOK("cache", "clear")
            let filler = try fill(container.root.path)
            let before = try container.state()

            let result = try container.app("attachment", "thumbnail", id, "-")
            #expect(result.status == 74, "\(result)")
            #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("error: "), "\(result)")
            #expect(result.stderr.lowercased().contains("no space left on device") && result.stderr.contains("the disk is full"), "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(try container.state() == before, "nothing left in tmp/ or caches/")

            try FileManager.default.removeItem(atPath: filler)
            let out = container.root.path + "/thumbnail.png"
            #expect(try container.app("attachment", "thumbnail", id, out).status == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)).prefix(4) == Data([0x89, 0x50, 0x4e, 0x47]))
            #expect(FileManager.default.fileExists(atPath: container.path + "/caches/thumbnails/\(id).png.sealed"))
        }
    }
}
