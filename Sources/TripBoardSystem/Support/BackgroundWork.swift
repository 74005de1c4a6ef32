/// One piece of work on a thread of its own, its value (or error) taken once with `value()`:
/// for checks that need nothing the caller is still making (a restore's store, checked while its
/// attachments are staged). Without a thread to spare (`pthread_create` failing), `value()` does
/// the work on the caller's thread.
///
///     let checks = BackgroundWork { try check(store) }
///     … other work …
///     let counts = try checks.value()   // joins the thread; its error is thrown here
///
/// `value()` must be called, once, before whatever the work reads is changed or removed: the
/// owner calls it on every path (a `defer` that drops the value is fine).
package final class BackgroundWork<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `outcome` is written by the work's thread before it ends and read by the owner
    // only after `join` (pthread_join orders the two), or, without a thread, by the owner alone.
    private var outcome: Result<Value, any Error>?
    private let body: @Sendable () throws -> Value
    private var thread: RelayThread?

    package init(_ body: @escaping @Sendable () throws -> Value) {
        self.body = body
        thread = RelayThread.start { [self] in outcome = Result { try body() } }
    }

    /// Waits for the work and returns its value, or throws its error. Later calls return the same.
    package func value() throws -> Value {
        if let thread {
            thread.join()
            self.thread = nil
        }
        if outcome == nil { outcome = Result { try body() } }
        return try outcome!.get()
    }
}
