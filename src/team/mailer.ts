import { createTransport } from 'nodemailer';
import type { SmtpConfig } from '../config/config.js';

export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** Sends the mail of invitations and password resets. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * Mail through the operator's SMTP server (VIGIL_SMTP_URL). The transport logs nothing itself,
 * so the password in the URL reaches no log; a failure is thrown without the URL.
 */
export function smtpMailer(config: SmtpConfig): Mailer {
  const transport = createTransport(config.url, { from: config.from });
  return {
    async send(message) {
      try {
        await transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
      } catch (err) {
        // nodemailer's errors name the server and its answer, never the credentials; only those are kept.
        const e = err as { code?: unknown; responseCode?: unknown; message?: unknown };
        throw new MailError(`mail to the SMTP server failed: ${String(e.code ?? 'error')}${e.responseCode ? ` (${String(e.responseCode)})` : ''}`);
      }
    },
  };
}

export class MailError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailError';
  }
}
