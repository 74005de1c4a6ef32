#include "tripboard_poppler.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-image.h>
#include <poppler-page-renderer.h>
#include <poppler-page.h>
#include <png.h>

#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

struct tripboard_pdf {
    std::unique_ptr<poppler::document> document;
};

namespace {

/// poppler's diagnostics ("error (1234): Couldn't find trailer dictionary") quote the file's
/// own bytes now and then, so they are shown nowhere: not on stderr, not in a reason.
void discardDiagnostic(const std::string &, void *) {}

/// Out of memory under pdf-worker's RLIMIT_AS: poppler is not exception-safe (a document that
/// threw may be half updated), and the client reads SIGABRT as "too complex to read safely".
[[noreturn]] void outOfMemory() {
    std::abort();
}

std::unique_ptr<poppler::page> loadPage(const tripboard_pdf *pdf, int index) {
    if (pdf == nullptr || index < 0 || index >= pdf->document->pages()) return nullptr;
    return std::unique_ptr<poppler::page>(pdf->document->create_page(index));
}

/// The page's size in points as it is shown: its crop box, turned by its /Rotate.
void shownSize(const poppler::page &page, double *width, double *height) {
    poppler::rectf box = page.page_rect(poppler::crop_box);
    poppler::page::orientation_enum orientation = page.orientation();
    bool turned = orientation == poppler::page::landscape || orientation == poppler::page::seascape;
    *width = turned ? box.height() : box.width();
    *height = turned ? box.width() : box.height();
}

/// A growing malloc'd buffer libpng writes into.
struct Buffer {
    unsigned char *bytes;
    std::size_t length;
    std::size_t capacity;
    bool failed;
};

void append(png_structp png, png_bytep data, png_size_t length) {
    Buffer *buffer = static_cast<Buffer *>(png_get_io_ptr(png));
    if (buffer->failed) return;
    if (buffer->length + length > buffer->capacity) {
        std::size_t capacity = buffer->capacity * 2 > buffer->length + length ? buffer->capacity * 2 : buffer->length + length;
        void *grown = std::realloc(buffer->bytes, capacity);
        if (grown == nullptr) {
            buffer->failed = true;
            return;
        }
        buffer->bytes = static_cast<unsigned char *>(grown);
        buffer->capacity = capacity;
    }
    std::memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
}

void flush(png_structp) {}

/// libpng reports errors by longjmp: this function holds nothing that needs a destructor.
bool encodePNG(const unsigned char *pixels, int width, int height, int stride, Buffer *buffer) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    if (png == nullptr) return false;
    png_infop info = png_create_info_struct(png);
    if (info == nullptr) {
        png_destroy_write_struct(&png, nullptr);
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_set_write_fn(png, buffer, append, flush);
    png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_set_bgr(png);  // poppler's bgr24: blue, green, red in memory
    for (int row = 0; row < height; row++) {
        png_write_row(png, const_cast<png_bytep>(pixels + static_cast<std::size_t>(row) * static_cast<std::size_t>(stride)));
    }
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return !buffer->failed;
}

}  // namespace

extern "C" {

tripboard_pdf *tripboard_pdf_open(const char *path, tripboard_pdf_status *status) {
    static const bool silenced = (poppler::set_debug_error_function(discardDiagnostic, nullptr), true);
    (void)silenced;
    try {
        std::unique_ptr<poppler::document> document(poppler::document::load_from_file(path));
        if (!document) {
            *status = TRIPBOARD_PDF_DAMAGED;
            return nullptr;
        }
        if (document->is_locked()) {
            *status = TRIPBOARD_PDF_ENCRYPTED;
            return nullptr;
        }
        tripboard_pdf *pdf = new tripboard_pdf{std::move(document)};
        *status = TRIPBOARD_PDF_OPENED;
        return pdf;
    } catch (const std::bad_alloc &) {
        outOfMemory();
    } catch (...) {
        *status = TRIPBOARD_PDF_FAILED;
        return nullptr;
    }
}

void tripboard_pdf_close(tripboard_pdf *pdf) {
    delete pdf;
}

int tripboard_pdf_page_count(const tripboard_pdf *pdf) {
    try {
        return pdf == nullptr ? 0 : pdf->document->pages();
    } catch (const std::bad_alloc &) {
        outOfMemory();
    } catch (...) {
        return 0;
    }
}

char *tripboard_pdf_page_text(const tripboard_pdf *pdf, int index, std::size_t *length) {
    try {
        std::unique_ptr<poppler::page> page = loadPage(pdf, index);
        if (!page) return nullptr;
        poppler::byte_array utf8 = page->text(poppler::rectf(), poppler::page::physical_layout).to_utf8();
        std::size_t count = utf8.size();
        // TextOutputDev ends every page with a form feed: the caller separates pages itself.
        while (count > 0 && (utf8[count - 1] == '\f' || utf8[count - 1] == '\n')) count--;
        char *text = static_cast<char *>(std::malloc(count + 1));
        if (text == nullptr) outOfMemory();
        if (count > 0) std::memcpy(text, utf8.data(), count);
        text[count] = '\0';
        *length = count;
        return text;
    } catch (const std::bad_alloc &) {
        outOfMemory();
    } catch (...) {
        return nullptr;
    }
}

int tripboard_pdf_page_size(const tripboard_pdf *pdf, int index, double *width, double *height) {
    try {
        std::unique_ptr<poppler::page> page = loadPage(pdf, index);
        if (!page) return 0;
        shownSize(*page, width, height);
        return 1;
    } catch (const std::bad_alloc &) {
        outOfMemory();
    } catch (...) {
        return 0;
    }
}

unsigned char *tripboard_pdf_render_png(const tripboard_pdf *pdf, int index, int width, int height,
                                        std::size_t *length, const char **reason) {
    try {
        std::unique_ptr<poppler::page> page = loadPage(pdf, index);
        if (!page) {
            *reason = "poppler cannot load the page";
            return nullptr;
        }
        double pageWidth = 0, pageHeight = 0;
        shownSize(*page, &pageWidth, &pageHeight);
        if (!(pageWidth > 0) || !(pageHeight > 0)) {
            *reason = "the page has no size";
            return nullptr;
        }
        poppler::page_renderer renderer;
        renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
        renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
        renderer.set_image_format(poppler::image::format_bgr24);
        renderer.set_paper_color(0xffffffff);
        poppler::image image = renderer.render_page(page.get(), 72.0 * width / pageWidth, 72.0 * height / pageHeight,
                                                    0, 0, width, height);
        if (!image.is_valid() || image.width() < width || image.height() < height) {
            *reason = "poppler drew no image";
            return nullptr;
        }
        Buffer buffer = {nullptr, 0, 0, false};
        if (!encodePNG(reinterpret_cast<const unsigned char *>(image.const_data()), width, height, image.bytes_per_row(), &buffer)) {
            std::free(buffer.bytes);
            *reason = "libpng could not encode the image";
            return nullptr;
        }
        *length = buffer.length;
        return buffer.bytes;
    } catch (const std::bad_alloc &) {
        outOfMemory();
    } catch (...) {
        *reason = "poppler failed";
        return nullptr;
    }
}

void tripboard_pdf_free(void *bytes) {
    std::free(bytes);
}

}  // extern "C"
