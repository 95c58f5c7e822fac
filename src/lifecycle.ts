/**
 * One lifecycle for what the service opens (issue 18, point 5; as Akvorado's
 * daemon component): parts are started in order and recorded in one list;
 * when a start fails, the parts already started are closed in reverse and the
 * error is thrown on; `close()` closes every started part in reverse, once.
 *
 * A part's start may be a promise begun earlier, so that it runs alongside
 * what comes before it (the flow path binds while the API modules load): it
 * is awaited in its place in the list, and only then recorded.
 */

/** How a part is started: a function called in its turn, or a start already under way. */
export type Start<T> = (() => T | Promise<T>) | Promise<T>;

/** A named part of the service. */
export interface Component<T> {
  readonly name: string;
  start: Start<T>;
  /** Closes what `start` returned; called at most once, in reverse order of the starts. */
  close(value: T): void | Promise<void>;
}

export interface LifecycleOptions {
  /** A part that failed to close: reported, and the others are closed all the same. */
  onCloseError(name: string, err: unknown): void;
}

interface Started {
  readonly name: string;
  close(): void | Promise<void>;
}

/** Thrown by a start after the lifecycle was closed (what it returned is closed at once). */
export class LifecycleClosedError extends Error {
  override readonly name = 'LifecycleClosedError';
}

function begin<T>(start: Start<T>): Promise<T> {
  // A function that throws synchronously rejects like one that returns a rejected promise.
  return start instanceof Promise ? start : Promise.resolve().then(start);
}

/** The started parts of a service, closed in reverse on failure or shutdown. */
export class Lifecycle {
  private readonly started: Started[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly opts: LifecycleOptions) {}

  /**
   * Starts a part (or awaits its start, begun earlier) and records it. If the start fails, every
   * part started before it is closed in reverse and the start's error is thrown on.
   */
  async start<T>(component: Component<T>): Promise<T> {
    const value = await this.settle(begin(component.start));
    const started: Started = { name: component.name, close: () => component.close(value) };
    if (this.closing) {
      // Closed while this part was starting (it would otherwise be left running).
      await this.closeOne(started);
      throw new LifecycleClosedError(`${component.name} started after the service was closed`);
    }
    this.started.push(started);
    return value;
  }

  /** `start` with the part given by its three fields. */
  open<T>(name: string, start: Start<T>, close: (value: T) => void | Promise<void>): Promise<T> {
    return this.start({ name, start, close });
  }

  /**
   * A step that opens nothing of its own (loading modules, starting a part already recorded):
   * if it fails, the started parts are closed in reverse and its error is thrown on.
   */
  run<T>(step: Start<T>): Promise<T> {
    return this.settle(begin(step));
  }

  /** Closes every started part in reverse order, once; a part that fails to close does not keep the others open. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const part of this.started.splice(0).reverse()) await this.closeOne(part);
    })();
    return this.closing;
  }

  private async settle<T>(starting: Promise<T>): Promise<T> {
    try {
      return await starting;
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private async closeOne(part: Started): Promise<void> {
    try {
      await part.close();
    } catch (err) {
      this.opts.onCloseError(part.name, err);
    }
  }
}
