package import Testing
import TripBoardSodium
package import TripBoardKeys

/// Bytes from hex written in a test (a published vector); a malformed literal is a bug in the test.
package func hex(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(Sodium.bytes(hex: text), "bad hex literal: \(text)", sourceLocation: sourceLocation)
}

/// A copy of what `secure` holds, for comparing with an expected value.
package func contents(_ secure: SecureBytes) -> [UInt8] {
    secure.withUnsafeBytes { Array($0) }
}
