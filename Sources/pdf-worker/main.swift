// pdf-worker: parses one untrusted PDF under resource limits for the processes that must not
// link poppler. The contract (arguments, JSON, exit statuses) is documented on `WorkerCommand`.
import PDFReader
import TripBoardSystem

ProcessSetup.exit(WorkerCommand.main(rawArguments: ProcessSetup.rawArguments()))
