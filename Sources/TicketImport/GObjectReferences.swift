internal import CPoppler

/// The one owner of a GObject reference (a `PopplerDocument`, a `PopplerPage`): unreferenced
/// exactly once, when the owner goes away.
final class GObjectReference {
    let pointer: OpaquePointer

    /// Takes over a reference the caller owns (a `_new` or `get_page` result: "transfer full").
    init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }
}

/// The one owner of a cairo image surface.
final class CairoSurface {
    let pointer: OpaquePointer

    init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    deinit { cairo_surface_destroy(pointer) }
}

/// The one owner of a cairo drawing context.
final class CairoContext {
    let pointer: OpaquePointer

    init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    deinit { cairo_destroy(pointer) }
}
