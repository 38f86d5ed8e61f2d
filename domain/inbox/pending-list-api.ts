/** The persistent list's functions, under names that read well from outside the inbox folder. */
export {
  type PendingList,
  emptyPendingList,
  pendingListOf,
  size as pendingSize,
  has as pendingHas,
  indexOf as pendingIndexOf,
  at as pendingAt,
  toArray as pendingItems,
  slice as pendingSlice,
} from './pending-list.js';
