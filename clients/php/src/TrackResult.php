<?php

declare(strict_types=1);

namespace Vigil;

/** What happened to one tracked event. */
final class TrackResult
{
    public function __construct(
        public readonly Outcome $outcome,
        /** HTTP status of the last answer, null when there was none. */
        public readonly ?int $status,
        /** The risk decision of a 2xx answer that carried one. */
        public readonly ?RiskDecision $risk,
        /** The event's event_id, given by the caller or generated. */
        public readonly string $eventId,
    ) {
    }

    public function accepted(): bool
    {
        return $this->outcome === Outcome::Accepted;
    }

    /**
     * The result with snake_case keys, as logged or serialised.
     *
     * @return array{outcome: string, status: ?int, risk: ?array<string, int|string>, event_id: string}
     */
    public function toArray(): array
    {
        return [
            'outcome' => $this->outcome->value,
            'status' => $this->status,
            'risk' => $this->risk?->toArray(),
            'event_id' => $this->eventId,
        ];
    }
}
