/* svg_plot.h: line charts as SVG files, with no plotting dependency (examples/evaluate.c,
   examples/mqar.c and the test that checks their files are well-formed).

   svg_chart(path, &chart, series, n) writes one chart: each series a polyline with a dot at each
   point and a legend entry; axes linear or base-2 logarithmic; ticks at round values (or, on a log
   axis, at powers of 2); a point that is not finite, or not positive on a log axis, is left out.
   Returns 0, or -1 when the file cannot be written.

   svg_listed(list, name): whether name is one of the comma- or space-separated names of list (the
   examples' --arch filters). */
#ifndef SVG_PLOT_H
#define SVG_PLOT_H
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct svg_series { const char *name; int n; const double *x, *y; } svg_series;
typedef struct svg_axes { const char *title, *xlabel, *ylabel; int logx, logy; } svg_axes;

enum { SVG_W = 640, SVG_H = 400, SVG_L = 70, SVG_R = 150, SVG_T = 40, SVG_B = 50 };
static const char *const svg_colors[10] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                                             "#7f7f7f", "#bcbd22" };

static int svg_listed(const char *list, const char *name) {
    const size_t n = strlen(name);
    while (*list) {
        size_t k = strcspn(list, ", ");
        if (k == n && strncmp(list, name, n) == 0) return 1;
        list += k;
        list += strspn(list, ", ");
    }
    return 0;
}
static int svg_ok(double v, int logv) { return isfinite(v) && (!logv || v > 0); }
static double svg_tr(double v, int logv) { return logv ? log2(v) : v; }
/* Pixel of value v on an axis from lo to hi (transformed values) over [p0, p1]. */
static double svg_px(double v, double lo, double hi, double p0, double p1) { return p0 + (v - lo) / (hi - lo) * (p1 - p0); }
/* A round tick step for a linear span: 1, 2 or 5 times a power of ten, about 5 ticks. */
static double svg_step(double span) {
    double p = pow(10.0, floor(log10(span / 5.0))), m = span / 5.0 / p;
    return p * (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0);
}
/* Text with XML's five specials escaped. */
static void svg_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else if (*s == '\'') fputs("&apos;", f);
        else fputc(*s, f);
    }
}
/* The ticks of one axis: lines across the plot and labels. */
static void svg_ticks(FILE *f, int vertical, double lo, double hi, int logv) {
    const double a0 = vertical ? SVG_H - SVG_B : SVG_L, a1 = vertical ? SVG_T : SVG_W - SVG_R;
    double v, step = logv ? 1.0 : svg_step(hi - lo);
    for (v = ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * (hi - lo); v += step) {
        double p = svg_px(v, lo, hi, a0, a1), shown = logv ? pow(2.0, v) : v + 0.0;   /* + 0.0: 0, not -0 */
        if (vertical) {
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", SVG_L, p, SVG_W - SVG_R, p);
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n", SVG_L - 6, p + 4, shown);
        } else {
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", p, SVG_T, p, SVG_H - SVG_B);
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n", p, SVG_H - SVG_B + 16, shown);
        }
    }
}
static int svg_chart(const char *path, const svg_axes *ax, const svg_series *s, int ns) {
    double x0 = HUGE_VAL, x1 = -HUGE_VAL, y0 = HUGE_VAL, y1 = -HUGE_VAL;
    int i, j, bad;
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (i = 0; i < ns; i++)
        for (j = 0; j < s[i].n; j++) {
            if (!svg_ok(s[i].x[j], ax->logx) || !svg_ok(s[i].y[j], ax->logy)) continue;
            x0 = fmin(x0, svg_tr(s[i].x[j], ax->logx));
            x1 = fmax(x1, svg_tr(s[i].x[j], ax->logx));
            y0 = fmin(y0, svg_tr(s[i].y[j], ax->logy));
            y1 = fmax(y1, svg_tr(s[i].y[j], ax->logy));
        }
    if (!(x0 <= x1)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;          /* no point: an empty frame */
    if (x1 - x0 < 1e-12) x0 -= 0.5, x1 += 0.5;
    if (ax->logy) y0 = floor(y0), y1 = ceil(y1);
    else if (y0 > 0 && y0 < 0.5 * y1) y0 = 0;                 /* a linear axis from 0 when the data is near it */
    if (y1 - y0 < 1e-12) y0 -= 0.5, y1 += 0.5;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_W, SVG_H);
    fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">", (SVG_L + SVG_W - SVG_R) / 2);
    svg_text(f, ax->title);
    fputs("</text>\n", f);
    svg_ticks(f, 0, x0, x1, ax->logx);
    svg_ticks(f, 1, y0, y1, ax->logy);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", SVG_L, SVG_T, SVG_W - SVG_L - SVG_R,
            SVG_H - SVG_T - SVG_B);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">", (SVG_L + SVG_W - SVG_R) / 2, SVG_H - 12);
    svg_text(f, ax->xlabel);
    fprintf(f, "</text>\n<text x=\"16\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">",
            (SVG_T + SVG_H - SVG_B) / 2, (SVG_T + SVG_H - SVG_B) / 2);
    svg_text(f, ax->ylabel);
    fputs("</text>\n", f);
    for (i = 0; i < ns; i++) {
        const char *col = svg_colors[i % 10];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
        for (j = 0; j < s[i].n; j++)
            if (svg_ok(s[i].x[j], ax->logx) && svg_ok(s[i].y[j], ax->logy))
                fprintf(f, "%.1f,%.1f ", svg_px(svg_tr(s[i].x[j], ax->logx), x0, x1, SVG_L, SVG_W - SVG_R),
                        svg_px(svg_tr(s[i].y[j], ax->logy), y0, y1, SVG_H - SVG_B, SVG_T));
        fputs("\"/>\n", f);
        for (j = 0; j < s[i].n; j++)
            if (svg_ok(s[i].x[j], ax->logx) && svg_ok(s[i].y[j], ax->logy))
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", svg_px(svg_tr(s[i].x[j], ax->logx), x0, x1, SVG_L, SVG_W - SVG_R),
                        svg_px(svg_tr(s[i].y[j], ax->logy), y0, y1, SVG_H - SVG_B, SVG_T), col);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", SVG_W - SVG_R + 10, SVG_T + 10 + 18 * i,
                SVG_W - SVG_R + 30, SVG_T + 10 + 18 * i, col);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", SVG_W - SVG_R + 36, SVG_T + 14 + 18 * i);
        svg_text(f, s[i].name);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    bad = ferror(f);
    return fclose(f) != 0 || bad ? -1 : 0;
}
#endif
