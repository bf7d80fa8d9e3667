/* --plot: legitimate loss (left axis, red) and RTT (right axis, blue)
 * against the attack rate achieved in each interval, one point per
 * interval, joined in order of rate. */
#include "flood_reports.h"
#include "plot_canvas.h"
#include "png_writer.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH      960
#define HEIGHT     560
#define LEFT       90
#define RIGHT      90
#define TOP        60
#define BOTTOM     70
#define TICKS      5
#define WHITE      0xFFFFFFu
#define BLACK      0x202020u
#define GRID       0xE0E0E0u
#define LOSS_COLOR 0xD03030u
#define RTT_COLOR  0x2060C0u
#define TEXT_SCALE 2
#define MARKER     6

typedef struct {
    double x, loss_percent, rtt_ms; /* negative: no value */
} chart_point;

typedef struct {
    plot_canvas canvas;
    double x_max, loss_max, rtt_max;
    int x0, y0, x1, y1; /* plot area, y0 at the top */
} chart;

/* The smallest TICKS x (1, 2 or 5 times a power of ten) that reaches max. */
static double axis_max(double max)
{
    if (!(max > 0))
        return 1;
    static const double mantissas[] = {1, 2, 5, 10};
    double base = pow(10, floor(log10(max / TICKS)));
    for (size_t i = 0; i < sizeof mantissas / sizeof mantissas[0]; i++)
        if (base * mantissas[i] * TICKS >= max)
            return base * mantissas[i] * TICKS;
    return base * 20 * TICKS;
}

static int to_x(const chart *c, double x)
{
    return c->x0 + (int)lround(x / c->x_max * (c->x1 - c->x0));
}

static int to_y(const chart *c, double value, double max)
{
    return c->y1 - (int)lround(value / max * (c->y1 - c->y0));
}

static void format_tick(char *out, size_t size, double value)
{
    if (value >= 100 || value == floor(value))
        snprintf(out, size, "%.0f", value);
    else if (value >= 1)
        snprintf(out, size, "%.1f", value);
    else
        snprintf(out, size, "%.2f", value);
}

static void draw_axes(chart *c)
{
    plot_canvas *p = &c->canvas;
    char label[32];
    int text_h = plot_text_height(TEXT_SCALE);
    for (int i = 0; i <= TICKS; i++) {
        int y = c->y1 - (c->y1 - c->y0) * i / TICKS;
        int x = c->x0 + (c->x1 - c->x0) * i / TICKS;
        plot_line(p, c->x0, y, c->x1, y, GRID, 1);
        plot_line(p, x, c->y0, x, c->y1, GRID, 1);
        format_tick(label, sizeof label, c->loss_max * i / TICKS);
        plot_text(p, c->x0 - 10 - plot_text_width(label, TEXT_SCALE), y - text_h / 2, label,
                  LOSS_COLOR, TEXT_SCALE);
        format_tick(label, sizeof label, c->rtt_max * i / TICKS);
        plot_text(p, c->x1 + 10, y - text_h / 2, label, RTT_COLOR, TEXT_SCALE);
        format_tick(label, sizeof label, c->x_max * i / TICKS);
        plot_text(p, x - plot_text_width(label, TEXT_SCALE) / 2, c->y1 + 10, label, BLACK,
                  TEXT_SCALE);
    }
    plot_line(p, c->x0, c->y0, c->x0, c->y1, BLACK, 2);
    plot_line(p, c->x1, c->y0, c->x1, c->y1, BLACK, 2);
    plot_line(p, c->x0, c->y1, c->x1, c->y1, BLACK, 2);
    const char *x_title = "attack rate (packets/s)";
    plot_text(p, (c->x0 + c->x1 - plot_text_width(x_title, TEXT_SCALE)) / 2, c->y1 + 20 + text_h,
              x_title, BLACK, TEXT_SCALE);
    plot_text(p, c->x0 - 70, c->y0 - 10 - text_h, "loss %", LOSS_COLOR, TEXT_SCALE);
    plot_text(p, c->x1 - plot_text_width("rtt ms", TEXT_SCALE) + 70, c->y0 - 10 - text_h, "rtt ms",
              RTT_COLOR, TEXT_SCALE);
    const char *title = "moat-flood: legitimate loss and rtt vs attack rate";
    plot_text(p, (WIDTH - plot_text_width(title, TEXT_SCALE)) / 2, 14, title, BLACK, TEXT_SCALE);
}

static int by_x(const void *a, const void *b)
{
    double d = ((const chart_point *)a)->x - ((const chart_point *)b)->x;
    return d < 0 ? -1 : d > 0 ? 1 : 0;
}

static void draw_series(chart *c, const chart_point *points, size_t n, bool loss)
{
    plot_color color = loss ? LOSS_COLOR : RTT_COLOR;
    double max = loss ? c->loss_max : c->rtt_max;
    int px = 0, py = 0;
    bool have_previous = false;
    for (size_t i = 0; i < n; i++) {
        double value = loss ? points[i].loss_percent : points[i].rtt_ms;
        if (value < 0)
            continue;
        int x = to_x(c, points[i].x), y = to_y(c, value, max);
        if (have_previous)
            plot_line(&c->canvas, px, py, x, y, color, 2);
        plot_rect(&c->canvas, x - MARKER / 2, y - MARKER / 2, MARKER, MARKER, color);
        px = x;
        py = y;
        have_previous = true;
    }
}

static size_t collect(const flood_result *r, chart_point *points)
{
    size_t n = 0;
    const timeline *t = &r->timeline;
    for (size_t i = 0; i < t->n_intervals; i++) {
        const timeline_interval *in = &t->intervals[i];
        if (!in->closed || in->length_s <= 0)
            continue;
        double loss = timeline_interval_loss(in);
        points[n].x = timeline_interval_attack_pps(in);
        points[n].loss_percent = loss >= 0 ? loss * 100 : -1;
        points[n].rtt_ms = timeline_interval_rtt_ms(in);
        n++;
    }
    qsort(points, n, sizeof points[0], by_x);
    return n;
}

int report_plot(const char *path, const flood_result *r, char *error, size_t error_size)
{
    chart c = {.x0 = LEFT, .y0 = TOP, .x1 = WIDTH - RIGHT, .y1 = HEIGHT - BOTTOM};
    if (plot_canvas_init(&c.canvas, WIDTH, HEIGHT, WHITE) != 0) {
        snprintf(error, error_size, "out of memory for the plot");
        return -1;
    }
    chart_point *points = g_new0(chart_point, r->timeline.n_intervals + 1);
    size_t n = collect(r, points);
    double x_max = 0, loss_max = 0, rtt_max = 0;
    for (size_t i = 0; i < n; i++) {
        x_max = fmax(x_max, points[i].x);
        loss_max = fmax(loss_max, points[i].loss_percent);
        rtt_max = fmax(rtt_max, points[i].rtt_ms);
    }
    c.x_max = axis_max(x_max);
    c.loss_max = axis_max(loss_max > 1 ? loss_max : 1);
    c.rtt_max = axis_max(rtt_max);
    draw_axes(&c);
    draw_series(&c, points, n, true);
    draw_series(&c, points, n, false);
    if (r->n_sessions == 0)
        plot_text(&c.canvas, c.x0 + 20, c.y0 + 20, "no legitimate sessions (--whip)", BLACK,
                  TEXT_SCALE);
    int status = png_write_rgb(path, c.canvas.rgb, WIDTH, HEIGHT, error, error_size);
    g_free(points);
    plot_canvas_free(&c.canvas);
    return status;
}
