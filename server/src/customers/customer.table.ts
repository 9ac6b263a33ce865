export interface CustomerTable {
  id: string;
  name: string;
  created_at: string;
}
