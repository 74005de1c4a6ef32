import TripBoardSystem

/// `file://` URIs for paths, because `poppler_document_new_from_file` takes a URI, not a path
/// (it calls `g_filename_from_uri`, which percent-decodes: a path containing `%`, `#`, `?` or a
/// space must be escaped or it names another file, or none).
enum FileURI {
    /// The `file://` URI of `path`: made absolute against the current directory, every byte but
    /// RFC 3986 unreserved characters and `/` percent-escaped (so a non-UTF-8 name survives too).
    static func make(path: String) -> String {
        make(path: path, currentDirectory: ProcessSetup.currentDirectory() ?? "/")
    }

    static func make(path: String, currentDirectory: String) -> String {
        let absolute = path.hasPrefix("/") ? path : (currentDirectory.hasSuffix("/") ? currentDirectory : currentDirectory + "/") + path
        let hex = Array("0123456789ABCDEF".utf8)
        var uri = Array("file://".utf8)
        for byte in absolute.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                uri.append(byte)
            default:
                uri += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: uri, as: UTF8.self)
    }
}
