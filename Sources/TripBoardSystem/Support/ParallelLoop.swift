import Glibc

/// Runs a loop body on several threads: for I/O-and-hash work over many independent files (the
/// migration plan hashes every attachment), where one core would leave the other idle.
///
///     try ParallelLoop.run(count: files.count) { worker, index in … }
///
/// Worker `w` takes the indices `w, w + threads, …`; worker 0 is the calling thread. The body must
/// only touch what its index owns (e.g. slot `index` of an `UnsafeMutableBufferPointer`). The
/// first error stops the worker that hit it; the others finish their share, then the error is
/// rethrown. Without a thread to spare (pthread_create failing), the caller does all of it.
package enum ParallelLoop {
    package static func run(count: Int, threads: Int = 2, _ body: (_ worker: Int, _ index: Int) throws -> Void) throws {
        let threads = max(1, min(threads, count))
        guard threads > 1 else {
            for index in 0..<count { try body(0, index) }
            return
        }
        try withoutActuallyEscaping(body) { body in
            let job = Job(count: count, threads: threads, body: body)
            var started: [pthread_t] = []
            var ownShare = Array(1..<threads)
            for worker in 1..<threads {
                var thread = pthread_t()
                let context = Unmanaged.passRetained(WorkerContext(job: job, worker: worker)).toOpaque()
                if pthread_create(&thread, nil, { context in
                    let worker = Unmanaged<WorkerContext>.fromOpaque(context!).takeRetainedValue()
                    worker.job.work(worker.worker)
                    return nil
                }, context) == 0 {
                    started.append(thread)
                    ownShare.removeAll { $0 == worker }
                } else {
                    Unmanaged<WorkerContext>.fromOpaque(context).release()
                }
            }
            job.work(0)
            for worker in ownShare { job.work(worker) }  // shares whose thread could not be started
            for thread in started { pthread_join(thread, nil) }
            if let error = job.errors.compactMap({ $0 }).first { throw error }
        }
    }

    private final class Job: @unchecked Sendable {
        // @unchecked: `errors[w]` is written only by worker w, and read after every worker is joined.
        package let count: Int
        package let threads: Int
        package let body: (Int, Int) throws -> Void
        package var errors: [(any Error)?]

        package init(count: Int, threads: Int, body: @escaping (Int, Int) throws -> Void) {
            self.count = count
            self.threads = threads
            self.body = body
            errors = Array(repeating: nil, count: threads)
        }

        package func work(_ worker: Int) {
            do {
                for index in stride(from: worker, to: count, by: threads) { try body(worker, index) }
            } catch {
                errors.withUnsafeMutableBufferPointer { $0[worker] = error }
            }
        }
    }

    private final class WorkerContext: @unchecked Sendable {
        // @unchecked: handed to one thread, never shared.
        package let job: Job
        package let worker: Int
        package init(job: Job, worker: Int) {
            self.job = job
            self.worker = worker
        }
    }
}
