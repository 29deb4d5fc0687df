import type { AddressAllowList } from "./address-allow-list.js";

/** The API user a request's key belongs to. */
export interface Caller {
  id: number;
  username: string;
  role: string;
  /** Where the key may be used from; absent: anywhere. Cached with the caller, so changing it announces the user. */
  allowedAddresses?: AddressAllowList;
}
