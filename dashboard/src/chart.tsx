import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
}

/** Axis labels in few characters: 20,000 reads "20K", so no label is cut at the axis' edge. */
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
export const axisLabel = (n: number): string => compact.format(n);

/** The page's colour scheme, followed while the chart is shown (its axes and grid take the theme's colours). */
function useDark(): boolean {
  const query = matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(query.matches);
  useEffect(() => {
    const change = () => setDark(query.matches);
    query.addEventListener('change', change);
    return () => query.removeEventListener('change', change);
  }, []);
  return dark;
}

const themeColour = (name: string): string => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * A time chart (uPlot) sized to its container. `times` are Unix milliseconds. A text summary
 * (the figure's accessible name) says what the chart shows for screen readers.
 */
export function TimeChart({
  times,
  series,
  label,
  bars,
  onSelect,
  bucketMs = 0,
  legend = true,
}: {
  times: readonly number[];
  series: readonly Series[];
  label: string;
  bars?: boolean;
  /** Called with the time range (Unix ms) dragged across, or the bucket clicked (`bucketMs` long). */
  onSelect?: (from: number, to: number) => void;
  bucketMs?: number;
  /** The series' names and values under the pointer; a chart of one series can do without. */
  legend?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const figure = useRef<HTMLElement>(null);
  const dark = useDark();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(240, el.clientWidth);
    let dragged = false;
    const fg = themeColour('--fg') || '#111827';
    const grid = themeColour('--line') || '#d1d5db';
    const data: uPlot.AlignedData = [times.map((t) => t / 1000), ...series.map((s) => [...s.values])];
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        legend: { show: legend },
        cursor: { drag: { x: onSelect !== undefined, y: false, setScale: false } },
        hooks: onSelect
          ? {
              setSelect: [
                (u) => {
                  if (u.select.width < 3) return;
                  dragged = true;
                  const from = u.posToVal(u.select.left, 'x') * 1000;
                  const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
                  u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
                  onSelect(from, to);
                },
              ],
            }
          : {},
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            fill: `${s.color}33`,
            width: 2,
            ...(bars ? { paths: uPlot.paths.bars?.({ size: [0.6, 40] }), points: { show: false } } : {}),
          })),
        ],
        axes: [
          { stroke: fg, grid: { stroke: grid }, ticks: { stroke: grid } },
          {
            stroke: fg,
            grid: { stroke: grid },
            ticks: { stroke: grid },
            values: (_u, splits) => {
              const labels = splits.map(axisLabel);
              // The labels drawn on the canvas, readable from the page (the canvas holds no text).
              figure.current?.setAttribute('data-y-labels', labels.join(' '));
              return labels;
            },
            // As wide as the longest label (about 8 px a character) plus the ticks' room.
            size: (_u, values) => 24 + 8 * Math.max(1, ...(values ?? []).map((v) => String(v).length)),
          },
        ],
      },
      data,
      el,
    );
    // A click on a bar (not the end of a drag) selects that bar's interval.
    const click = () => {
      const idx = plot.cursor.idx;
      if (!dragged && onSelect && idx !== null && idx !== undefined && times[idx] !== undefined) onSelect(times[idx], times[idx] + bucketMs);
      dragged = false;
    };
    if (onSelect) plot.over.addEventListener('click', click);
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.over.removeEventListener('click', click);
      plot.destroy();
    };
  }, [times, series, bars, onSelect, bucketMs, legend, dark]);
  const totals = series.map((s) => `${s.label}: ${s.values.reduce((a, b) => a + b, 0)}`).join(', ');
  return (
    <figure class="chart" ref={figure} aria-label={`${label} (${totals})`}>
      <div ref={box} />
      <figcaption class="visually-hidden">
        {label}: {totals}
      </figcaption>
    </figure>
  );
}
