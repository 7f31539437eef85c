/*
 * picture.c - gpuprio-demo's picture: the LC client's latency distribution in the rows marked
 * `curve` (scenarios.c), as one self-contained SVG file.
 *
 * An empirical CDF: for each row, the fraction of its requests (y) that completed within a
 * latency (x, log scale), drawn as a step line through the latencies of the requests the host did
 * not stall, all rounds' (result.c; at most DEMO_LAT_POINTS, evenly spaced in rank). A CDF shows
 * what two
 * percentiles cannot: where the whole distribution moves when BE shares the device, and whether
 * gpuprio moves all of it back or only its body. The SVG is written by hand, as text (no library,
 * no script, no fonts or files it refers to), so it opens in any browser or viewer and can be
 * committed and diffed; labels are escaped, so the file is well-formed XML whatever a row's label
 * says (tests/demo checks it with an XML parser).
 *
 * Style carries meaning, so the legend needs no more than the labels: grey for a row without BE,
 * red for one without gpuprio, blue for one with it; dashed for a row of several processes.
 */
#include "demo.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The SVG's width and the plot area inside it, in px; under the plot, the x axis's title, then
 * the legend, a line per curve (the height follows from their number). */
#define PIC_W 760
#define PLOT_X0 70
#define PLOT_X1 (PIC_W - 30)
#define PLOT_Y0 64
#define PLOT_Y1 384
#define XTITLE_Y (PLOT_Y1 + 40)
#define LEGEND_Y (PLOT_Y1 + 66)
#define LEGEND_STEP 18

/* The log axis: from lo to hi (ms), each a 1-2-5 value. */
typedef struct axis {
    double lo, hi;
} axis;

static double px_x(const axis *a, double ms)
{
    double v = ms < a->lo ? a->lo : ms > a->hi ? a->hi : ms;
    return PLOT_X0 +
           (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) * (PLOT_X1 - PLOT_X0);
}

static double px_y(double fraction)
{
    return PLOT_Y1 - fraction * (PLOT_Y1 - PLOT_Y0);
}

/* The 1-2-5 value next to v: the largest at or below it (down), else the smallest at or above. */
static double step125(double v, bool down)
{
    static const double m[] = {1, 2, 5, 10};
    double decade = pow(10, floor(log10(v)));
    if (down) {
        double best = decade;
        for (int i = 0; i < 3; i++)
            if (m[i] * decade <= v * (1 + 1e-9))
                best = m[i] * decade;
        return best;
    }
    for (int i = 0; i < 4; i++)
        if (m[i] * decade >= v * (1 - 1e-9))
            return m[i] * decade;
    return 10 * decade;
}

/* Writes s as XML character data (also fit for an attribute value in double quotes). */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static const char *curve_color(const scenario *sc)
{
    return !sc->be_workers ? "#555555" : sc->gpuprio ? "#1f6fb4" : "#d62728";
}

/* The axes: frame, grid, ticks and their labels, axis titles, and the P50 and P99 guides. */
static void draw_axes(FILE *f, const axis *a)
{
    fprintf(f, "<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
    for (double d = pow(10, floor(log10(a->lo))); d <= a->hi; d *= 10)
        for (int m = 1; m <= 9; m++)
            if (m * d > a->lo * 1.0001 && m * d < a->hi * 0.9999)
                fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", px_x(a, m * d),
                        PLOT_Y0, px_x(a, m * d), PLOT_Y1);
    for (int k = 1; k < 10; k++)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PLOT_X0, px_y(k / 10.0),
                PLOT_X1, px_y(k / 10.0));
    fprintf(f, "</g>\n");
    /* The percentiles the table gives, so the picture and the table can be read together. */
    static const struct {
        double y;
        const char *name;
    } guides[] = {{0.5, "P50"}, {0.99, "P99"}};
    for (size_t k = 0; k < sizeof guides / sizeof guides[0]; k++)
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999999\" "
                "stroke-dasharray=\"2 3\"/>\n<text x=\"%d\" y=\"%.1f\" text-anchor=\"start\" "
                "fill=\"#666666\">%s</text>\n",
                PLOT_X0, px_y(guides[k].y), PLOT_X1, px_y(guides[k].y), PLOT_X1 + 3,
                px_y(guides[k].y) + 4, guides[k].name);
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333333\"/>\n",
            PLOT_X0, PLOT_Y0, PLOT_X1 - PLOT_X0, PLOT_Y1 - PLOT_Y0);
    fprintf(f, "<g fill=\"#333333\">\n");
    for (double d = pow(10, floor(log10(a->lo))); d <= a->hi * 1.0001; d *= 10) {
        static const int major[] = {1, 2, 5};
        for (int k = 0; k < 3; k++) {
            double v = major[k] * d;
            if (v < a->lo * 0.9999 || v > a->hi * 1.0001)
                continue;
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333333\"/>\n"
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                    px_x(a, v), PLOT_Y1, px_x(a, v), PLOT_Y1 + 5, px_x(a, v), PLOT_Y1 + 19, v);
        }
    }
    for (int k = 0; k <= 10; k += 2)
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#333333\"/>\n"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n",
                PLOT_X0 - 5, px_y(k / 10.0), PLOT_X0, px_y(k / 10.0), PLOT_X0 - 8,
                px_y(k / 10.0) + 4, k / 10.0);
    fprintf(
        f,
        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">LC request latency, ms (log scale; left is better)"
        "</text>\n"
        "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">"
        "fraction of requests done within it</text>\n</g>\n",
        (PLOT_X0 + PLOT_X1) / 2, XTITLE_Y, (PLOT_Y0 + PLOT_Y1) / 2, (PLOT_Y0 + PLOT_Y1) / 2);
}

/* Point k of a curve of n points through the sorted latencies of c: the nearest-rank quantile
 * (k+1)/n, in ms. */
static double curve_point(const client_result *c, size_t k, size_t n)
{
    return (double)c->kept_ns[((k + 1) * c->nkept + n - 1) / n - 1] / 1e6;
}

/* One row's CDF: a step line up through its latencies, then on at 1 to the right edge. */
static void draw_curve(FILE *f, const axis *a, const scenario *sc, const row_result *r)
{
    const client_result *c = &r->lc;
    size_t n = c->nkept < DEMO_LAT_POINTS ? c->nkept : DEMO_LAT_POINTS;
    fprintf(f, "<path class=\"cdf\" id=\"cdf-");
    xml_text(f, sc->id);
    fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s d=\"M%.1f %.1f",
            curve_color(sc), sc->split ? " stroke-dasharray=\"7 4\"" : "",
            px_x(a, curve_point(c, 0, n)), px_y(0));
    for (size_t k = 0; k < n; k++) {
        if (k)
            fprintf(f, " H%.1f", px_x(a, curve_point(c, k, n)));
        fprintf(f, " V%.1f", px_y((double)(k + 1) / (double)n));
    }
    fprintf(f, " H%d\"><title>", PLOT_X1);
    xml_text(f, sc->headline ? sc->headline : sc->title);
    fprintf(f, "</title></path>\n");
}

/* The legend, under the plot (inside it, it would hide the foot of some curve wherever it went):
 * each row's line style, its label, its P50 and P99; or, for a row the host stalled too much to
 * measure (not drawn), its label and why. */
static void draw_legend(FILE *f, const size_t *rows, size_t n, const row_result *res)
{
    fprintf(f, "<g font-size=\"12\">\n");
    for (size_t k = 0; k < n; k++) {
        const scenario *sc = &demo_scenarios[rows[k]];
        const row_result *r = &res[rows[k]];
        int y = LEGEND_Y + LEGEND_STEP * (int)k;
        if (!demo_client_measured(&r->lc)) {
            fprintf(f, "<text x=\"%d\" y=\"%d\">", PLOT_X0 + 38, y);
            xml_text(f, sc->headline ? sc->headline : sc->title);
            fprintf(
                f, ": not drawn, the host stalled %" PRIu64 " of its %" PRIu64 " requests</text>\n",
                r->lc.stalled, r->lc.reqs);
            continue;
        }
        fprintf(
            f,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n"
            "<text x=\"%d\" y=\"%d\">",
            PLOT_X0, y - 4, PLOT_X0 + 30, y - 4, curve_color(sc),
            sc->split ? " stroke-dasharray=\"7 4\"" : "", PLOT_X0 + 38, y);
        xml_text(f, sc->headline ? sc->headline : sc->title);
        fprintf(f, ": P50 %.2f ms, P99 %.2f ms</text>\n", (double)r->lc.p50_ns / 1e6,
                (double)r->lc.p99_ns / 1e6);
    }
    fprintf(f, "</g>\n");
}

bool demo_write_picture(const options *o, const row_result *res, const bool *ok)
{
    size_t *rows = calloc(demo_nscenarios, sizeof *rows), n = 0;
    double lo = 0, hi = 0;
    if (!rows) {
        fprintf(stderr, "gpuprio-demo: out of memory\n");
        return false;
    }
    size_t drawn = 0;
    for (size_t i = 0; i < demo_nscenarios; i++) {
        const row_result *r = &res[i];
        if (!demo_scenarios[i].curve || !demo_row_selected(o, i) || !ok[i] || !r->lc.reqs)
            continue;
        rows[n++] = i;
        if (!demo_client_measured(&r->lc))
            continue;
        double first = (double)r->lc.kept_ns[0] / 1e6,
               last = (double)r->lc.kept_ns[r->lc.nkept - 1] / 1e6;
        lo = drawn == 0 || first < lo ? first : lo;
        hi = drawn == 0 || last > hi ? last : hi;
        drawn++;
    }
    if (drawn == 0) /* an empty plot, of the span an LC request's latency usually has */
        lo = 0.5, hi = 10;
    if (n == 0) {
        fprintf(stderr, "gpuprio-demo: no row of the picture ran (and succeeded): %s not written\n",
                o->svg);
        free(rows);
        return false;
    }
    /* A latency is at least a kernel's simulated duration; 1 us keeps the log axis finite. */
    axis a = {step125(lo > 1e-3 ? lo : 1e-3, true), step125(hi > 1e-3 ? hi : 1e-3, false)};
    if (a.hi <= a.lo)
        a.hi = step125(a.lo * 1.5, false);

    int pic_h = LEGEND_Y + LEGEND_STEP * (int)(n - 1) + 14;
    FILE *f = fopen(o->svg, "w");
    if (!f) {
        fprintf(stderr, "gpuprio-demo: cannot write the picture to %s: %s\n", o->svg,
                strerror(errno));
        free(rows);
        return false;
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n"
            "<title>gpuprio-demo: LC request latency, empirical CDF</title>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            PIC_W, pic_h, PIC_W, pic_h);
    fprintf(f,
            "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">Urgent client (LC) "
            "next to best-effort load (BE): LC latency, empirical CDF</text>\n"
            "<text x=\"%d\" y=\"44\" fill=\"#444444\">gpuprio-demo, simulated GPU. LC: %g "
            "requests/s, each %d kernels of %g us; BE: %g us kernels; %d x %g s per row.</text>\n",
            PLOT_X0 - 50, PLOT_X0 - 50, o->rate, o->kernels, o->lc_us, o->be_us, o->rounds,
            o->seconds);
    draw_axes(f, &a);
    for (size_t k = 0; k < n; k++)
        if (demo_client_measured(&res[rows[k]].lc))
            draw_curve(f, &a, &demo_scenarios[rows[k]], &res[rows[k]]);
    draw_legend(f, rows, n, res);
    free(rows);
    fprintf(f, "</svg>\n");
    bool failed = ferror(f) != 0;
    failed = fclose(f) != 0 || failed;
    if (failed) {
        fprintf(stderr, "gpuprio-demo: writing the picture to %s failed\n", o->svg);
        return false;
    }
    return true;
}
