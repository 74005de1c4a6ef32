import TripBoardStorage
import TripBoardModel
import TripBoardCommandLine

/// A human list of one kind of record (`place list`, `booking list`), derived from its
/// declaration: every column with a heading (`ColumnSpec.heading`), in declaration order, each
/// printed from the row's bytes by its form — the id as its first 8 characters, a kind or state
/// as its name, a flag as yes or no, a booking time as `BookingTimeText` writes it in the zone
/// its declaration gives it (`RecordColumn.zoneColumns`: a booking's end in its own zone, else
/// the booking's), any other text as it is.
struct RecordListCells<Column: RecordColumn> {
    /// How one cell is printed.
    private enum Cell {
        case id, text, date, flag, syncState, bookingKind
        /// A time, with the positions of the zone columns it is shown in.
        case time(zones: [Int32])
    }

    private let plan: [(position: Int32, cell: Cell)]
    /// The headings, the extra ones (a joined trip's name) after the id's.
    let header: [String]

    /// `extraHeadings`: the heading of a joined column shown after the id (`booking list`'s TRIP).
    init(extraHeadings: [String] = []) {
        let shown = Column.allCases.filter { $0.spec.heading != nil }
        plan = shown.map { column in
            let spec = column.spec
            let cell: Cell = switch spec.form {
            case _ where column.rawValue == Column.id.rawValue: .id
            case _ where spec.rule == .bookingTime: .time(zones: Column.zoneColumns(of: column).map(\.position))
            case .text, .optionalText, .version: .text
            case .date: .date
            case .bool: .flag
            case .syncState: .syncState
            case .bookingKind: .bookingKind
            }
            return (column.position, cell)
        }
        let headings = shown.compactMap(\.spec.heading)
        header = Array(headings.prefix(1)) + extraHeadings + headings.dropFirst()
    }

    /// Appends the cells of `row` (selected with `Column.selectList`, then anything a join adds);
    /// `extraColumn`, a text column of the row, goes after the id (its heading the extra one);
    /// times name their year unless it is `tripYear`.
    func append(_ row: borrowing StoreRow, to cells: inout TableRow, times: inout BookingTimeText, buffer: inout [UInt8],
                tripYear: Int? = nil, extraColumn: Int32? = nil) {
        for (index, step) in plan.enumerated() {
            switch step.cell {
            case .id: row.withText(step.position) { cells.append(prefix: 8, ofUTF8: $0) }
            case .text: row.withText(step.position) { cells.append(utf8: $0) }  // NULL lends no bytes: ""
            case .date:
                let date = RecordBytes.date(row, step.position)
                cells.appendASCII { date.appendDescription(to: &$0) }
            case .flag: cells.append(ascii: row.integer(step.position) != 0 ? "yes" : "no")
            case .syncState: cells.append(ascii: RecordBytes.syncStateName(row, step.position))
            case .bookingKind: cells.append(ascii: RecordBytes.bookingKindName(row, step.position))
            case .time(let zones):
                var zone: String?
                for position in zones where zone == nil { zone = row.optionalText(position) }
                row.withText(step.position) { stored in
                    times.write(stored: stored, zone: zone, tripYear: tripYear, into: &buffer)
                    buffer.withUnsafeBytes { cells.append(utf8: $0) }
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            if index == 0, let extraColumn { row.withText(extraColumn) { cells.append(utf8: $0) } }
        }
    }
}
