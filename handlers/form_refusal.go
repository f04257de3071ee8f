package handlers

import "github.com/batcheval/batcheval/web"

// formRefusal gathers the messages of a refused browser form: in order,
// for the summary at the top of the page, and by the id of the input each
// is about, to show beside it (web.fieldErrorList). The New project form,
// the dataset upload form and its mapping step fill their views from it.
type formRefusal struct {
	errors []web.FormError
	fields map[string][]string
}

// add records msg about the input of id field ("" for the form as a
// whole: listed in the summary only). A message said twice of one input
// is kept once.
func (r *formRefusal) add(field, msg string) {
	for _, e := range r.errors {
		if e.Field == field && e.Text == msg {
			return
		}
	}
	r.errors = append(r.errors, web.FormError{Field: field, Text: msg})
	if field == "" {
		return
	}
	if r.fields == nil {
		r.fields = map[string][]string{}
	}
	r.fields[field] = append(r.fields[field], msg)
}

// refused reports whether anything was refused.
func (r formRefusal) refused() bool { return len(r.errors) > 0 }

// fillMapping puts the refusal on the mapping step's view.
func (r formRefusal) fillMapping(v *web.DatasetMappingView) {
	v.Errors, v.FieldErrors = r.errors, r.fields
}

// fillUpload puts the refusal on the upload form's view.
func (r formRefusal) fillUpload(v *web.DatasetUploadView) {
	v.Errors, v.FieldErrors = r.errors, r.fields
}
