//! A `<canvas>` that a chart draws into: sized for the device pixel ratio, redrawn when
//! its data or the window size changes, with a hover readout.

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use crate::charts::{Frame, Theme, NARROW_CHART_CSS_PX};

/// The area a chart draws into.
pub type CanvasArea = DrawingArea<CanvasBackend, Shift>;

/// Whether the system asks for a dark colour scheme.
pub fn prefers_dark() -> bool {
    window()
        .match_media("(prefers-color-scheme: dark)")
        .ok()
        .flatten()
        .map(|m| m.matches())
        .unwrap_or(false)
}

/// A chart canvas. `draw` reads the signals it needs (so it redraws when they change)
/// and returns the plotting frames; `readout(panel, x, y)` turns a hovered data point
/// into text.
#[component]
pub fn ChartCanvas(
    /// `data-testid` of the canvas.
    testid: &'static str,
    /// Accessible description of the chart.
    label: &'static str,
    /// Height [CSS px].
    height: f64,
    /// Height when the canvas is narrower than [`NARROW_CHART_CSS_PX`], for a chart
    /// whose panels then stack [CSS px]; `height` when not given.
    #[prop(optional)]
    narrow_height: Option<f64>,
    /// Draws the chart; called inside an effect.
    draw: impl Fn(&CanvasArea, &Theme) -> Vec<Frame> + 'static,
    /// Hover text at data coordinates of a panel.
    readout: impl Fn(usize, f64, f64) -> Option<String> + 'static,
    /// Receives the plotting frames and the device pixel ratio in the animation frame
    /// after each draw, for an overlay laid over the chart.
    #[prop(optional)]
    frames_out: Option<RwSignal<(Vec<Frame>, f64)>>,
    /// The readout text, when an overlay writes it too.
    #[prop(optional)]
    hover: Option<RwSignal<Option<String>>>,
    /// Whether the canvas takes the height its container's layout leaves it (`height`
    /// is then its least), redrawn whenever that changes: the embed card's chart fills
    /// the iframe below the figures.
    #[prop(optional)]
    fill: bool,
    /// Elements laid over the canvas (positioned against it).
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let readout = std::rc::Rc::new(readout);
    let readout_key = readout.clone();
    let frames = StoredValue::new_local(Vec::<Frame>::new());
    let hover = hover.unwrap_or_else(|| RwSignal::new(None::<String>));
    let set_hover = hover.write_only();
    let (resized, set_resized) = signal(0u32);
    let listener = window_event_listener(ev::resize, move |_| set_resized.update(|n| *n += 1));
    on_cleanup(move || listener.remove());
    // Redraw in the new colours when the system switches between light and dark.
    if let Ok(Some(query)) = window().match_media("(prefers-color-scheme: dark)") {
        let on_change = Closure::<dyn Fn()>::new(move || set_resized.update(|n| *n += 1));
        let _ =
            query.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
        let held = StoredValue::new_local(Some((query, on_change)));
        on_cleanup(move || {
            if let Some((query, on_change)) = held.try_update_value(Option::take).flatten() {
                let _ = query.remove_event_listener_with_callback(
                    "change",
                    on_change.as_ref().unchecked_ref(),
                );
            }
        });
    }
    if fill {
        // The container's height follows the figures above it as they arrive, with no
        // window resize: watch the canvas itself.
        let observer = StoredValue::new_local(None::<(web_sys::ResizeObserver, Closure<dyn Fn()>)>);
        let resized_now = move || set_resized.update(|n| *n += 1);
        Effect::new(move |_| {
            let Some(el) = canvas.get() else {
                return;
            };
            if observer.with_value(Option::is_some) {
                return;
            }
            let on_resize = Closure::<dyn Fn()>::new(resized_now);
            if let Ok(o) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) {
                o.observe(&el);
                observer.set_value(Some((o, on_resize)));
            }
        });
        on_cleanup(move || {
            if let Some((o, _)) = observer.try_update_value(Option::take).flatten() {
                o.disconnect();
            }
        });
    }
    // The frames drawn reach the overlay from the next animation frame, a callback of the
    // page as a resize is: the drawing effect itself writes no signal.
    let publish = move |out: RwSignal<(Vec<Frame>, f64)>, drawn: Vec<Frame>, dpr: f64| {
        request_animation_frame(move || {
            let _ = out.try_set((drawn, dpr));
        });
    };
    Effect::new(move |_| {
        resized.track();
        let Some(el) = canvas.get() else {
            return;
        };
        let dpr = window().device_pixel_ratio().clamp(1.0, 4.0);
        let css_w = el.client_width().max(40) as f64;
        let css_h = match narrow_height {
            _ if fill => (el.client_height() as f64).max(height),
            Some(n) if css_w < NARROW_CHART_CSS_PX => n,
            _ => height,
        };
        if narrow_height.is_some() {
            let _ = web_sys::HtmlElement::style(&el).set_property("height", &format!("{css_h}px"));
        }
        // Setting a canvas's size drops its pixels even when the size is the same; every
        // chart paints its whole background, so an unchanged size is left alone.
        let (w, h) = ((css_w * dpr).round() as u32, (css_h * dpr).round() as u32);
        if el.width() != w {
            el.set_width(w);
        }
        if el.height() != h {
            el.set_height(h);
        }
        let theme = Theme {
            scale: dpr,
            dark: prefers_dark(),
        };
        let Some(backend) = CanvasBackend::with_canvas_object(el) else {
            return;
        };
        let area = backend.into_drawing_area();
        let drawn = draw(&area, &theme);
        let _ = area.present();
        if let Some(out) = frames_out {
            publish(out, drawn.clone(), dpr);
        }
        frames.set_value(drawn);
    });
    let on_move = move |ev: ev::MouseEvent| {
        let dpr = window().device_pixel_ratio().clamp(1.0, 4.0);
        let (px, py) = (ev.offset_x() as f64 * dpr, ev.offset_y() as f64 * dpr);
        let text = frames.with_value(|fs| {
            fs.iter()
                .find_map(|f| f.to_data(px, py).map(|(x, y)| (f.panel, x, y)))
        });
        set_hover.set(text.and_then(|(panel, x, y)| readout(panel, x, y)));
    };
    // Keyboard: arrows move a cursor across the first panel; the readout follows it.
    let cursor = StoredValue::new(0.5_f64);
    let on_key = move |ev: ev::KeyboardEvent| {
        // 2% a press, 10% with Shift; Home and End go to the ends.
        let big = if ev.shift_key() { 5.0 } else { 1.0 };
        let to = |c: f64| match ev.key().as_str() {
            "ArrowRight" => Some(c + 0.02 * big),
            "ArrowLeft" => Some(c - 0.02 * big),
            "Home" => Some(0.0),
            "End" => Some(1.0),
            _ => None,
        };
        let Some(next) = to(cursor.get_value()) else {
            return;
        };
        ev.prevent_default();
        cursor.set_value(next.clamp(0.0, 1.0));
        let at = cursor.get_value();
        let text = frames.with_value(|fs| {
            fs.first().and_then(|f| {
                let px = f.px_x.start as f64 + at * (f.px_x.end - f.px_x.start) as f64;
                let py = (f.px_y.start + f.px_y.end) as f64 / 2.0;
                f.to_data(px, py).map(|(x, y)| (f.panel, x, y))
            })
        });
        set_hover.set(text.and_then(|(panel, x, y)| readout_key(panel, x, y)));
    };
    view! {
        <figure class="chart" class:chart-fill=fill>
            <div class="chart-stack" style=fill.then(|| format!("min-height:{height}px"))>
            <canvas
                node_ref=canvas
                data-testid=testid
                role="img"
                aria-label=label
                style=if fill { "width:100%;height:100%".to_string() } else { format!("width:100%;height:{height}px") }
                tabindex="0"
                on:keydown=on_key
                on:mousemove=on_move
                on:mouseleave=move |_| set_hover.set(None)
            ></canvas>
            {children.map(|c| c())}
            </div>
            <figcaption class="readout" aria-live="polite" data-testid=format!("{testid}-readout")>
                {move || hover.get().unwrap_or_else(|| "Hover the chart, or focus it and use ← → (Shift for bigger steps), for values.".into())}
            </figcaption>
        </figure>
    }
}
