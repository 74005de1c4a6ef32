// sync-agent: the only TripBoard program that links libpq. `app sync …` starts it and speaks to
// it in frames on stdin/stdout; the conversation is documented on `AgentMain` and in docs/sync.md.
import TripBoardSyncServer
import TripBoardSystem

ProcessSetup.exit(AgentMain.main(rawArguments: ProcessSetup.rawArguments()))
