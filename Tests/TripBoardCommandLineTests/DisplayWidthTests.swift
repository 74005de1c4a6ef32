import Testing
@testable import TripBoardCommandLine

/// Table cells are measured in terminal columns (`TableRow.displayWidth`): CJK and fullwidth
/// forms and emoji two wide, combining marks and zero-width characters none.
struct DisplayWidthTests {
    @Test(arguments: [
        ("Lisbon", 6), ("Belém", 5), ("Bele\u{301}m", 5), ("東京と京都", 10), ("新大阪", 6), ("ｶﾀｶﾅ", 4), ("ＡＢ", 4),
        ("서울", 4), ("☕️", 2), ("🚆 Alfa", 7), ("a\u{200B}b", 2), ("👩‍👩‍👧", 2), ("", 0),
    ])
    func aCellIsMeasuredInColumns(text: String, columns: Int) {
        #expect(TableRow.displayWidth(text) == columns, "\(text)")
    }

    /// Every line of a table with CJK names puts its next column at the same terminal column.
    @Test func aTableWithCJKTextIsAligned() {
        let console = Console(echoesErrors: false)
        console.printTable(header: ["NAME", "START"], rows: [["Lisbon", "2027-03-01"], ["東京と京都", "2027-04-01"], ["Café ☕️", "2027-05-01"]])
        let lines = console.outputText.split(separator: "\n").map(String.init)
        let columns = lines.map { line -> Int in
            let name = line.prefix { $0 != "2" && $0 != "S" }
            return TableRow.displayWidth(String(name))
        }
        #expect(Set(columns).count == 1, "\(lines)")
    }
}
