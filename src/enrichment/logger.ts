/** The slice of a pino logger the enrichment module uses. */
export interface EnrichmentLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}
