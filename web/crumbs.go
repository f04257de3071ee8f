package web

// underProject is the trail of a page that hangs under a project (a run's
// pages, a dataset's review queue): the project first, as on the run page,
// then the rest. A view whose project is unset (Label "") starts with the
// rest, so no empty step shows.
func underProject(project Crumb, rest ...Crumb) []Crumb {
	if project.Label == "" {
		return rest
	}
	return append([]Crumb{project}, rest...)
}
