package handlers

import "github.com/labstack/echo/v4"

func (h *Handlers) registerRunRoutes(e *echo.Echo) {}
