/**
 * One syslog message as rsyslog's stock template stores it, and where the
 * embedded receiver hands such messages: the model the syslog receiver
 * (collector/syslog) and the syslog stores (storage/syslog) share.
 */

/** What rsyslog's stock template writes for one message, and what the embedded receiver writes. */
export interface SyslogEvent {
  /** `YYYY-MM-DD HH:MM:SS`, the sender's wall clock (rsyslog drops the offset). */
  deviceReportedTime: string;
  /** `YYYY-MM-DD HH:MM:SS`, receiver's wall clock in the configured zone. */
  receivedAt: string;
  fromHost: string;
  sysLogTag: string;
  /** Severity 0–7. */
  priority: number;
  /** Facility number 0–23. */
  facility: number;
  message: string;
}

/** Write side used by the embedded receiver (a syslog store implements it). */
export interface SyslogEventSink {
  /** Inserts the events in one transaction, in order. */
  insertEvents(events: readonly SyslogEvent[]): Promise<void>;
}
