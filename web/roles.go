package web

// What a page offers follows the role of whoever reads it: the server
// refuses what a role may not do (403), and the page does not offer it.
// A page without Nav (a share link's visitor) offers nothing.

// CanEdit reports whether the reader may create, launch, edit and delete
// (editors and owners).
func (p Page) CanEdit() bool {
	return p.Nav != nil && (p.Nav.Role == "editor" || p.Nav.Role == "owner")
}

// CanManage reports whether the reader may manage judges, keys and members
// (owners).
func (p Page) CanManage() bool { return p.Nav.IsOwner() }
