import { Card } from '../ui';

/** Custom detection rules (threat models): listed, edited and dry-run here once the service offers them. */
export function ThreatModelsView({ pro }: { pro: boolean }) {
  return (
    <>
      <h1>Threat models</h1>
      <Card title="Custom detection rules">
        <p>
          Threat models are your own detection rules: conditions on any event field, thresholds over a window, and the alert they raise. They can be tested
          against stored events before they are enabled.
        </p>
        <p>{pro ? 'They will appear here as soon as this service offers them.' : 'Threat models come with the Pro and Business plans.'}</p>
      </Card>
    </>
  );
}
