/**
 * Reliability plots as self-contained SVG: the favourite's predicted chance
 * (x, 0.5 to 1) against how often the favourite won (y, draws counting
 * half), one line per system, bins with fewer than `minCount` matches left
 * out. A calibrated system lies on the diagonal.
 */
import type { CalibrationBin } from './metrics.js';

export interface ReliabilitySeries {
  label: string;
  bins: readonly CalibrationBin[];
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function reliabilitySvg(title: string, series: readonly ReliabilitySeries[], minCount = 20): string {
  const width = 640;
  const plot = 400;
  const left = 60;
  const top = 40;
  const legendX = left + plot + 20;
  const x = (p: number) => left + ((p - 0.5) / 0.5) * plot;
  const y = (p: number) => top + plot - Math.max(0, Math.min(1, p)) * plot;
  const height = Math.max(top + plot + 50, top + 20 * series.length + 40);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width + 400}" height="${height}" viewBox="0 0 ${width + 400} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="20" font-size="14">${escapeXml(title)}</text>`,
    `<rect x="${left}" y="${top}" width="${plot}" height="${plot}" fill="none" stroke="#999"/>`,
  ];
  for (let tick = 0; tick <= 10; tick++) {
    const px = 0.5 + tick * 0.05;
    parts.push(`<line x1="${x(px)}" y1="${top + plot}" x2="${x(px)}" y2="${top + plot + 4}" stroke="#999"/>`);
    if (tick % 2 === 0) parts.push(`<text x="${x(px)}" y="${top + plot + 16}" text-anchor="middle">${px.toFixed(1)}</text>`);
  }
  for (let tick = 0; tick <= 10; tick++) {
    const py = tick / 10;
    parts.push(`<line x1="${left - 4}" y1="${y(py)}" x2="${left}" y2="${y(py)}" stroke="#999"/>`);
    if (tick % 2 === 0) parts.push(`<text x="${left - 8}" y="${y(py) + 4}" text-anchor="end">${py.toFixed(1)}</text>`);
  }
  parts.push(`<text x="${left + plot / 2}" y="${top + plot + 34}" text-anchor="middle">predicted chance of the favourite</text>`);
  parts.push(`<text transform="translate(16 ${top + plot / 2}) rotate(-90)" text-anchor="middle">observed score of the favourite</text>`);
  parts.push(`<line x1="${x(0.5)}" y1="${y(0.5)}" x2="${x(1)}" y2="${y(1)}" stroke="#bbb" stroke-dasharray="4 4"/>`);
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const points = s.bins.filter((b) => b.n >= minCount).map((b) => `${x(b.predicted).toFixed(1)},${y(b.observed).toFixed(1)}`);
    if (points.length > 0) {
      parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${colour}" stroke-width="1.5"/>`);
      for (const point of points) {
        const [px, py] = point.split(',');
        parts.push(`<circle cx="${px}" cy="${py}" r="2.5" fill="${colour}"/>`);
      }
    }
    parts.push(`<line x1="${legendX}" y1="${top + 10 + i * 20}" x2="${legendX + 20}" y2="${top + 10 + i * 20}" stroke="${colour}" stroke-width="2"/>`);
    parts.push(`<text x="${legendX + 26}" y="${top + 14 + i * 20}">${escapeXml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
