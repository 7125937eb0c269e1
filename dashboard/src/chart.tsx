import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
}

/**
 * A time chart (uPlot) sized to its container. `times` are Unix milliseconds. A text summary
 * (the figure's accessible name) says what the chart shows for screen readers.
 */
export function TimeChart({ times, series, label, bars }: { times: readonly number[]; series: readonly Series[]; label: string; bars?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(240, el.clientWidth);
    const data: uPlot.AlignedData = [times.map((t) => t / 1000), ...series.map((s) => [...s.values])];
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
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
        axes: [{}, { size: 50 }],
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, bars]);
  const totals = series.map((s) => `${s.label}: ${s.values.reduce((a, b) => a + b, 0)}`).join(', ');
  return (
    <figure class="chart" aria-label={`${label} (${totals})`}>
      <div ref={box} />
      <figcaption class="visually-hidden">
        {label}: {totals}
      </figcaption>
    </figure>
  );
}
