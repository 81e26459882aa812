// uPlot wrappers. uPlot needs explicit pixel sizes, so each chart follows its
// container's width through a ResizeObserver.
import uPlot from './vendor/uPlot.esm.js';
import { h } from './ui.js';

// Eleven hues far enough apart to tell any two apart, each dark enough for white text
// (World vs World keeps one per world across the page, so any two may meet in one bar).
export const PALETTE = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#475569', '#92400e', '#111827'];

/** A distinct colour for series `index`, cycling the palette then shifting hue. */
export function colour(index) {
  if (index < PALETTE.length) return PALETTE[index];
  return `hsl(${(index * 137.5) % 360} 65% 45%)`;
}

/**
 * Draws a line chart into a new figure and returns { figure, plot, destroy }.
 * @param {object} spec
 * @param {string} spec.title       accessible name and caption
 * @param {number[]} spec.x         x values (match number, week, game)
 * @param {{label:string, values:(number|null)[], color?:string, dash?:number[], width?:number, points?:boolean}[]} spec.series
 * @param {{upper:number, lower:number, fill:string}[]} [spec.bands] indices into spec.series
 * @param {string} [spec.xLabel]
 * @param {string} [spec.yLabel]
 * @param {(x:number)=>string} [spec.formatX]
 * @param {number} [spec.height]   @default 280
 */
export function lineChart(spec) {
  const target = h('div', { class: 'chart-canvas' });
  const figure = h(
    'figure',
    // data-points: how many x values the chart draws (the tests compare it with the data).
    { class: 'chart', role: 'group', 'aria-label': spec.title, dataset: { points: String(spec.x.length) } },
    h('figcaption', {}, spec.title),
    target,
  );
  const formatX = spec.formatX ?? ((x) => String(x));
  const options = {
    width: 600,
    height: spec.height ?? 280,
    scales: { x: { time: false } },
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    axes: [
      { label: spec.xLabel, values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? formatX(tick) : '')) },
      { label: spec.yLabel, size: 60 },
    ],
    series: [
      { label: spec.xLabel ?? 'x', value: (_u, x) => (x === null || x === undefined ? '–' : formatX(x)) },
      ...spec.series.map((serie, index) => ({
        label: serie.label,
        stroke: serie.color ?? colour(index),
        width: serie.width ?? 2,
        dash: serie.dash,
        points: { show: serie.points ?? spec.x.length <= 40 },
        spanGaps: true,
        value: (_u, y) => (y === null || y === undefined ? '–' : y.toFixed(2)),
      })),
    ],
    bands: (spec.bands ?? []).map((band) => ({ series: [band.upper + 1, band.lower + 1], fill: band.fill })),
  };
  const data = [spec.x, ...spec.series.map((serie) => serie.values)];
  let plot;
  let observer;
  // Draw once the figure is in the page so the width is known.
  requestAnimationFrame(() => {
    if (!figure.isConnected) return;
    options.width = Math.max(260, target.clientWidth);
    plot = new uPlot(options, data, target);
    observer = new ResizeObserver(() => {
      const width = Math.max(260, target.clientWidth);
      if (plot && Math.abs(width - plot.width) > 2) plot.setSize({ width, height: options.height });
    });
    observer.observe(target);
  });
  return {
    figure,
    destroy() {
      observer?.disconnect();
      plot?.destroy();
    },
  };
}
