// The resource types one ADS stream subscribes to, and per type the version and resources last
// accepted: a response of one type is compiled with the other types' last accepted resources.
import type { WireAny } from './resource';

interface Accepted {
  readonly version: string;
  readonly resources: readonly WireAny[];
}

/**
 * State of the world per type URL. A management server that does not know a type leaves its
 * subscription unanswered (go-control-plane's snapshot cache keeps such a watch open), so a
 * type never answered counts as having no resources and holds nothing else up.
 */
export class TypeSubscriptions {
  private readonly accepted = new Map<string, Accepted>();

  constructor(
    /** Subscribed to in this order on every new stream. */
    readonly typeUrls: readonly string[],
  ) {}

  isSubscribed(typeUrl: string): boolean {
    return this.typeUrls.includes(typeUrl);
  }

  /** The version last accepted of a type ('' before any), for its requests. */
  lastVersion(typeUrl: string): string {
    return this.accepted.get(typeUrl)?.version ?? '';
  }

  /** A response's resources of `typeUrl` with every other type's last accepted ones. */
  resourcesWith(typeUrl: string, resources: readonly WireAny[]): WireAny[] {
    const all: WireAny[] = [];
    for (const url of this.typeUrls) {
      if (url === typeUrl) all.push(...resources);
      else all.push(...(this.accepted.get(url)?.resources ?? []));
    }
    return all;
  }

  /**
   * Whether a response's resources are byte for byte the ones last accepted of its type (none
   * before any): a server that bumps one version for every type sends such responses, and
   * compiling them again would change nothing.
   */
  isUnchanged(typeUrl: string, resources: readonly WireAny[]): boolean {
    const before = this.accepted.get(typeUrl)?.resources ?? [];
    if (before.length !== resources.length) return false;
    return resources.every((r, i) => {
      const b = before[i];
      return (
        b !== undefined &&
        b.type_url === r.type_url &&
        Buffer.from(b.value ?? []).equals(Buffer.from(r.value ?? []))
      );
    });
  }

  /** The response of `typeUrl` was accepted: its resources stand until the next one. */
  accept(typeUrl: string, version: string, resources: readonly WireAny[]): void {
    this.accepted.set(typeUrl, { version, resources });
  }
}
