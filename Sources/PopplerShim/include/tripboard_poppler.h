#ifndef TRIPBOARD_POPPLER_H
#define TRIPBOARD_POPPLER_H
// A C face for the few things pdf-worker asks of poppler's C++ API (poppler-cpp): open a PDF,
// count its pages, the text of a page, page 1 rendered (Splash, as pdftoppm does) and encoded as
// PNG (libpng). No C++ exception crosses it: every entry point catches them all, and ends the
// process with SIGABRT on std::bad_alloc (out of memory under pdf-worker's RLIMIT_AS: poppler is
// not exception-safe, and the client reports that signal as a PDF too complex to read safely).
// poppler's diagnostics are discarded: they can quote the file's bytes.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tripboard_pdf tripboard_pdf;

typedef enum {
    TRIPBOARD_PDF_OPENED = 0,
    /// Opening it needs a user password.
    TRIPBOARD_PDF_ENCRYPTED = 1,
    /// poppler made no document of it, even after repairing its cross-reference table.
    TRIPBOARD_PDF_DAMAGED = 2,
    /// A failure that is not about the file (an exception other than std::bad_alloc).
    TRIPBOARD_PDF_FAILED = 3,
} tripboard_pdf_status;

/// Opens `path` without a password. NULL with `*status` set unless `*status` is OPENED.
tripboard_pdf *tripboard_pdf_open(const char *path, tripboard_pdf_status *status);

void tripboard_pdf_close(tripboard_pdf *document);

int tripboard_pdf_page_count(const tripboard_pdf *document);

/// The text of page `index` (0-based) in reading order, as `pdftotext` prints it, without the
/// form feed and newlines that end a page: UTF-8 of `*length` bytes, freed with
/// `tripboard_pdf_free`. NULL when the page cannot be loaded.
char *tripboard_pdf_page_text(const tripboard_pdf *document, int index, size_t *length);

/// The size of page `index` in points as it is shown: its crop box, turned by its /Rotate.
/// Returns 0 when the page cannot be loaded.
int tripboard_pdf_page_size(const tripboard_pdf *document, int index, double *width, double *height);

/// Page `index` rendered on white (anti-aliased, as pdftoppm does) to `width` × `height` pixels
/// and encoded as an 8-bit RGB PNG of `*length` bytes, freed with `tripboard_pdf_free`. NULL on
/// failure, with a reason (NUL-terminated, static) in `*reason`.
unsigned char *tripboard_pdf_render_png(const tripboard_pdf *document, int index, int width, int height,
                                        size_t *length, const char **reason);

/// Frees what `tripboard_pdf_page_text` and `tripboard_pdf_render_png` returned.
void tripboard_pdf_free(void *bytes);

#ifdef __cplusplus
}
#endif
#endif
