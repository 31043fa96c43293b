/* bench_plot.c — the roofline picture of an ocx-bench run, drawn with cairo into an SVG file:
 * log-log axes of arithmetic intensity (flop/byte) against GFLOP/s, the device's roofs from the
 * measured peaks (the global-memory bandwidth slope, one compute ceiling per measured precision),
 * and every row that did flops as a point. Rows whose traffic was not reported (bytes = 0) sit on the
 * right edge, in the "AI not reported" band; rows without flops (copies, transfers) have no place on a
 * FLOP/s roofline and are listed under the plot with their share of the bandwidth roof. A path
 * ending in .png gives a PNG image instead. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Before any measurement: --plot is refused at once where it could not be drawn (no cairo) or the
 * file could not be written, instead of after minutes of benchmarks. The probe appends nothing to
 * a file already there and removes one it made. */
int bench_plot_check(const char *path)
{
#ifndef HAVE_CAIRO
    fprintf(stderr, "ocx-bench: --plot %s: this ocx-bench was built without cairo (configure found none, or was given "
            "--without-cairo; apt-get install libcairo2-dev)\n", path);
    return 1;
#else
    /* An existing file (or a link's target) is opened without O_CREAT and left as it is; only a
     * file this call made (O_EXCL: never through a link) is removed again. */
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK);
    int made = 0;
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        made = fd >= 0;
    }
    struct stat link;
    if (fd < 0 && errno == EEXIST && lstat(path, &link) == 0 && S_ISLNK(link.st_mode)) { /* to no file */
        fprintf(stderr, "ocx-bench: --plot %s: a link whose target does not exist (a new file is not made "
                "through a link; name the file itself)\n", path);
        return 1;
    }
    if (fd < 0) {
        fprintf(stderr, "ocx-bench: --plot %s: %s\n", path, strerror(errno));
        return 1;
    }
    close(fd);
    if (made) unlink(path);
    return 0;
#endif
}

#ifndef HAVE_CAIRO
int bench_plot_svg(bench *b, const char *path)
{
    (void)b;
    return bench_plot_check(path);
}
#else
#include <cairo-svg.h>
#include <cairo.h>

#define W 900.0
#define H 640.0
#define ML 80.0  /* margins: left, right, top, bottom */
#define MR 150.0
#define MT 50.0
#define MB 120.0
#define BAND 40.0 /* the band at the right edge for rows without an intensity, apart from the axis */
#define GAP 8.0

typedef struct axes {
    double x0, x1, y0, y1; /* log10 ranges */
} axes;

/* The intensity axis ends left of the band (a point at its end had sat in the band, unlabelled). */
static double px(const axes *a, double x)
{
    return ML + (log10(x) - a->x0) / (a->x1 - a->x0) * (W - ML - MR - BAND - GAP);
}
static double py(const axes *a, double y) { return H - MB - (log10(y) - a->y0) / (a->y1 - a->y0) * (H - MT - MB); }

static void group_color(cairo_t *cr, const char *group)
{
    static const struct {
        const char *g;
        double r, gr, bl;
    } c[] = {{"vector", 0.12, 0.47, 0.71}, {"reduce", 0.17, 0.63, 0.17}, {"gemm", 0.84, 0.15, 0.16},
             {"transfer", 0.58, 0.40, 0.74}, {"streams", 1.0, 0.50, 0.05}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (strcmp(group, c[i].g) == 0) {
            cairo_set_source_rgb(cr, c[i].r, c[i].gr, c[i].bl);
            return;
        }
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
}

/* Labels already placed (device units), so that a point's label that would overlap one is left out:
 * the point stays, the report has its name. */
typedef struct labels {
    double x0[512], y0[512], x1[512], y1[512];
    int n;
} labels;

static int label_free(labels *l, double x, double y, double w, double h)
{
    for (int i = 0; i < l->n; i++)
        if (x < l->x1[i] && x + w > l->x0[i] && y - h < l->y1[i] && y > l->y0[i]) return 0;
    if (l->n < 512) {
        l->x0[l->n] = x;
        l->x1[l->n] = x + w;
        l->y0[l->n] = y - h;
        l->y1[l->n++] = y;
    }
    return 1;
}

static void text(cairo_t *cr, double x, double y, double size, const char *s)
{
    cairo_set_font_size(cr, size);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s);
}

/* One compute ceiling: the bandwidth slope up to the ridge, then flat. */
static void roof(cairo_t *cr, const axes *a, double bw, double peak)
{
    double ridge = peak / bw, xmin = pow(10, a->x0), xmax = pow(10, a->x1);
    cairo_move_to(cr, px(a, xmin), py(a, bw * xmin));
    if (ridge > xmin) cairo_line_to(cr, px(a, ridge), py(a, peak));
    cairo_line_to(cr, px(a, xmax), py(a, peak));
    cairo_stroke(cr);
}

int bench_plot_svg(bench *b, const char *path)
{
    if (!b->have_peaks) {
        fprintf(stderr, "ocx-bench: --plot needs the measured peaks\n");
        return 1;
    }
    const ocx_peaks *p = &b->peaks;
    double bw = p->global_gbps;
    double top = fmax(fmax(p->f32_gflops, p->tc_f16_gflops), fmax(p->f16_gflops, p->f64_gflops)), bottom = top;
    size_t i;
    json_t *row;
    double right = 1e3; /* intensities up to 1000, or the highest a row has (8192^3 f16: 2048) */
    json_array_foreach(b->rows, i, row) {
        double f = json_real_value(json_object_get(row, "gflop_per_s"));
        if (f > 0 && f < bottom) bottom = f;
        if (f > top) top = f;
        right = fmax(right, 1.3 * json_real_value(json_object_get(row, "intensity")));
    }
    axes a = {-2, ceil(log10(right)), floor(log10(fmin(bottom, bw * 0.01))) - 0.2, ceil(log10(top * 2))};
    size_t plen = strlen(path);
    int png = plen > 4 && strcmp(path + plen - 4, ".png") == 0;
    cairo_surface_t *surf = png ? cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)W, (int)H)
                                : cairo_svg_surface_create(path, W, H);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        fprintf(stderr, "ocx-bench: %s: %s\n", path, cairo_status_to_string(cairo_surface_status(surf)));
        cairo_surface_destroy(surf);
        return 1;
    }
    cairo_t *cr = cairo_create(surf);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);

    /* grid and decade labels */
    cairo_set_line_width(cr, 0.5);
    char s[512];
    for (int e = (int)ceil(a.x0); e <= (int)floor(a.x1); e++) { /* decades within the axes only */
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        cairo_move_to(cr, px(&a, pow(10, e)), MT);
        cairo_line_to(cr, px(&a, pow(10, e)), H - MB);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(s, sizeof s, "%g", pow(10, e));
        text(cr, px(&a, pow(10, e)) - 10, H - MB + 16, 11, s);
    }
    for (int e = (int)ceil(a.y0); e <= (int)floor(a.y1); e++) {
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        cairo_move_to(cr, ML, py(&a, pow(10, e)));
        cairo_line_to(cr, W - MR, py(&a, pow(10, e)));
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(s, sizeof s, "%g", pow(10, e));
        text(cr, ML - 8 - 6.5 * strlen(s), py(&a, pow(10, e)) + 4, 11, s);
    }
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, ML, MT, W - ML - MR, H - MT - MB);
    cairo_stroke(cr);
    text(cr, ML + (W - ML - MR) / 2 - 110, H - MB + 34, 13, "arithmetic intensity [flop/byte]");
    cairo_save(cr);
    cairo_move_to(cr, 24, MT + (H - MT - MB) / 2 + 30);
    cairo_rotate(cr, -M_PI / 2);
    cairo_set_font_size(cr, 13);
    cairo_show_text(cr, "GFLOP/s");
    cairo_restore(cr);
    snprintf(s, sizeof s, "Roofline of %s — memory %.1f GB/s%s", b->info.name, bw, p->quick ? " (quick peaks)" : "");
    text(cr, ML, MT - 18, 14, s);

    /* the roofs, clipped to the plot */
    cairo_save(cr);
    cairo_rectangle(cr, ML, MT, W - ML - MR, H - MT - MB);
    cairo_clip(cr);
    cairo_set_line_width(cr, 2);
    cairo_set_source_rgb(cr, 0, 0, 0);
    if (p->f32_gflops > 0) roof(cr, &a, bw, p->f32_gflops);
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    if (p->f16_gflops > 0) roof(cr, &a, bw, p->f16_gflops);
    if (p->f64_gflops > 0) roof(cr, &a, bw, p->f64_gflops);
    if (p->tc_f16_gflops > 0) roof(cr, &a, bw, p->tc_f16_gflops);
    cairo_restore(cr);
    /* the ceilings' labels sit in the right margin: draw them unclipped */
    static const char *names[] = {"f32 FMA", "f16 FMA", "f64 FMA", "tensor cores"};
    double peaks[] = {p->f32_gflops, p->f16_gflops, p->f64_gflops, p->tc_f16_gflops};
    labels placed = {.n = 0};
    for (int k = 0; k < 4; k++) {
        if (!(peaks[k] > 0)) continue;
        cairo_set_source_rgb(cr, k ? 0.4 : 0, k ? 0.4 : 0, k ? 0.4 : 0);
        snprintf(s, sizeof s, "%s %.4g", names[k], peaks[k]);
        double y = py(&a, peaks[k]) + 4;
        while (!label_free(&placed, W - MR + 4, y, MR - 8, 12)) y += 13; /* equal ceilings: stack */
        text(cr, W - MR + 4, y, 11, s);
    }
    /* the bandwidth label along its slope, left of the ridge */
    {
        double x = pow(10, a.x0 + 0.15), x2 = pow(10, a.x0 + 1.15);
        double angle = atan2(py(&a, bw * x2) - py(&a, bw * x), px(&a, x2) - px(&a, x));
        snprintf(s, sizeof s, "%.4g GB/s", bw);
        cairo_save(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, px(&a, x), py(&a, bw * x) - 6);
        cairo_rotate(cr, angle);
        cairo_set_font_size(cr, 11);
        cairo_show_text(cr, s);
        cairo_restore(cr);
        label_free(&placed, px(&a, x), py(&a, bw * x) - 6, px(&a, x2) - px(&a, x), py(&a, bw * x) - py(&a, bw * x2));
    }
    /* the "AI not reported" band at the right edge */
    cairo_set_source_rgba(cr, 0.5, 0.5, 0.5, 0.12);
    cairo_rectangle(cr, W - MR - BAND, MT, BAND, H - MT - MB);
    cairo_fill(cr);

    /* the points */
    char traffic[4][96];
    int ntraffic = 0, more = 0;
    json_array_foreach(b->rows, i, row) {
        const char *group = json_string_value(json_object_get(row, "group"));
        const char *op = json_string_value(json_object_get(row, "op"));
        const char *dt = json_string_value(json_object_get(row, "dtype"));
        double f = json_real_value(json_object_get(row, "gflop_per_s"));
        double ai = json_real_value(json_object_get(row, "intensity")); /* 0 for null */
        json_t *eff = json_object_get(row, "efficiency_percent");
        if (f <= 0) {
            if (ntraffic < 4 && json_is_number(eff))
                snprintf(traffic[ntraffic++], sizeof traffic[0], "%s %s %s: %.0f%% of %.1f GB/s", group, op, dt,
                         json_number_value(eff), json_real_value(json_object_get(row, "bound_gb_per_s")));
            else
                more++;
            continue;
        }
        double x = ai > 0 ? px(&a, fmin(fmax(ai, pow(10, a.x0)), pow(10, a.x1))) : W - MR - 20;
        double y = py(&a, f);
        group_color(cr, group);
        cairo_arc(cr, x, y, 4, 0, 2 * M_PI);
        cairo_fill(cr);
        snprintf(s, sizeof s, "%s %s", op, dt);
        cairo_set_font_size(cr, 9);
        cairo_text_extents_t ext;
        cairo_text_extents(cr, s, &ext);
        if (label_free(&placed, x + 6, y - 2, ext.x_advance, 10)) {
            cairo_set_source_rgba(cr, 0, 0, 0, 0.75);
            text(cr, x + 6, y - 2, 9, s);
        }
    }
    /* legend: groups, then the traffic-only rows */
    static const char *groups[] = {"vector", "reduce", "gemm", "streams"};
    for (int g = 0; g < 4; g++) {
        group_color(cr, groups[g]);
        cairo_arc(cr, ML + 10 + 110 * g, H - MB + 56, 4, 0, 2 * M_PI);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text(cr, ML + 18 + 110 * g, H - MB + 60, 11, groups[g]);
    }
    text(cr, ML + 450, H - MB + 60, 11, "grey band: traffic not reported (bound: compute)");
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    for (int t = 0; t < ntraffic; t++)
        text(cr, ML + 10 + (t % 2) * 380, H - MB + 80 + (t / 2) * 15, 10, traffic[t]);
    if (more) {
        snprintf(s, sizeof s, "… and %d more rows without flops (see the report)", more);
        text(cr, ML + 10, H - MB + 112, 10, s);
    }
    cairo_destroy(cr);
    cairo_status_t cs = png ? cairo_surface_write_to_png(surf, path) : CAIRO_STATUS_SUCCESS;
    cairo_surface_finish(surf);
    if (cs == CAIRO_STATUS_SUCCESS) cs = cairo_surface_status(surf);
    cairo_surface_destroy(surf);
    if (cs != CAIRO_STATUS_SUCCESS) {
        fprintf(stderr, "ocx-bench: %s: %s\n", path, cairo_status_to_string(cs));
        return 1;
    }
    return 0;
}
#endif
