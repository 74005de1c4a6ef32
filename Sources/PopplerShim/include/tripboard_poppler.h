#ifndef TRIPBOARD_POPPLER_H
#define TRIPBOARD_POPPLER_H
// A C face for the few things pdf-worker asks of poppler's C++ API (poppler-cpp): open a PDF,
// count its pages, the text of a page, page 1 rendered (Splash, as pdftoppm does) and encoded as
// PNG (libpng). No C++ exception crosses it: every entry point catches them all.
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
    /// Out of memory (std::bad_alloc) or another failure that is not about the file.
    TRIPBOARD_PDF_FAILED = 3,
} tripboard_pdf_status;

/// poppler's last diagnostic since the last `tripboard_pdf_open` (NUL-terminated, at most 255
/// bytes), "" when there was none. poppler's diagnostics ("Syntax Error: …") go here, never to
/// stderr, from the first `tripboard_pdf_open` on.
const char *tripboard_pdf_last_diagnostic(void);

/// Opens `path` without a password. NULL with `*status` set unless `*status` is OPENED.
tripboard_pdf *tripboard_pdf_open(const char *path, tripboard_pdf_status *status);

void tripboard_pdf_close(tripboard_pdf *document);

int tripboard_pdf_page_count(const tripboard_pdf *document);

/// The text of page `index` (0-based) in reading order, as `pdftotext` prints it, without the
/// form feed that ends a page: UTF-8 of `*length` bytes, freed with `tripboard_pdf_free`. NULL when
/// the page cannot be loaded.
char *tripboard_pdf_page_text(const tripboard_pdf *document, int index, size_t *length);

/// The size of page `index` in points as it is shown: its crop box, turned by its /Rotate.
/// Returns 0 when the page cannot be loaded.
int tripboard_pdf_page_size(const tripboard_pdf *document, int index, double *width, double *height);

/// Page `index` rendered on white (anti-aliased, as pdftoppm does) to `width` × `height` pixels
/// and encoded as an 8-bit RGB PNG of `*length` bytes, freed with `tripboard_pdf_free`. NULL on failure, with a reason
/// (NUL-terminated, static) in `*reason`.
unsigned char *tripboard_pdf_render_png(const tripboard_pdf *document, int index, int width, int height,
                                        size_t *length, const char **reason);

/// Frees what `tripboard_pdf_page_text` and `tripboard_pdf_render_png` returned.
void tripboard_pdf_free(void *bytes);

#ifdef __cplusplus
}
#endif
#endif
