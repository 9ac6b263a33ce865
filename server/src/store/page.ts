/** Which slice of a list a read returns: the `page`th of `per_page` rows (README, The management API: lists). */
export interface Page {
  page: number;
  per_page: number;
}
